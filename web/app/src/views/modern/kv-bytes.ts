// Bytes a KV cache holds for one layer: K and V, float32.
export function kvCacheBytes(p: { kvHeads: number; dK: number; dV: number; tokens: number }) {
  const perToken = p.kvHeads * (p.dK + p.dV) * 4;
  return { perToken, total: perToken * p.tokens };
}
