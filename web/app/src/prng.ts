// Deterministic numbers for embeddings and weights: the same word or seed always
// gives the same vector, on every machine, so a shared link reproduces a view.

/** FNV-1a hash of a string, 32-bit. */
export function hashString(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

/** mulberry32, the package reference's generator (one definition for tests, benchmarks and the page). */
export { mulberry32 } from 'attnscope/reference';

/** Standard normal samples (Box–Muller) from a uniform generator. */
export function gaussian(uniform: () => number): () => number {
  return () => {
    const u = Math.max(uniform(), 1e-12);
    const v = uniform();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  };
}
