// Deterministic benchmark inputs, with no Node import, so the same numbers are
// made in Node and in a browser (there threads-browser.mjs's server writes
// 'attnscope/reference' as its address, since a worker has no import map).
import { mulberry32 } from 'attnscope/reference';

/** n normally distributed floats from a seed (mulberry32 + Box–Muller): runs are comparable. */
export function gaussian(n, seed) {
  const uniform = mulberry32(seed);
  const out = new Float32Array(n);
  for (let i = 0; i < n; i += 2) {
    const r = Math.sqrt(-2 * Math.log(1 - uniform()));
    const a = 2 * Math.PI * uniform();
    out[i] = r * Math.cos(a);
    if (i + 1 < n) out[i + 1] = r * Math.sin(a);
  }
  return out;
}
