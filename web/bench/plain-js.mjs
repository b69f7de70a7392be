// Scaled dot-product attention in plain JavaScript, the baseline a web page
// would write without WebAssembly: one query row at a time, scores for that
// row only (O(T) scratch), max-subtracted softmax, then weights·values. It
// is a peer being timed, so it stays the loop a page would write; the
// accuracy reference that keeps every step is attnscope/reference.

/**
 * @param {Float32Array} queries (H, T, d) row-major
 * @param {Float32Array} keys    (H, T, d)
 * @param {Float32Array} values  (H, T, d)
 * @returns {Float32Array} output (H, T, d)
 */
export function plainAttention(queries, keys, values, H, T, d, causal) {
  const output = new Float32Array(H * T * d);
  const scores = new Float64Array(T);
  const row = new Float64Array(d);
  const scale = 1 / Math.sqrt(d);
  for (let h = 0; h < H; ++h) {
    const base = h * T * d;
    for (let i = 0; i < T; ++i) {
      const q = base + i * d;
      const visible = causal ? i + 1 : T; // causal_mask: keys after the query are skipped
      let max = -Infinity;
      for (let j = 0; j < visible; ++j) {
        const k = base + j * d;
        let dot = 0;
        for (let c = 0; c < d; ++c) dot += queries[q + c] * keys[k + c];
        const s = dot * scale;
        scores[j] = s;
        if (s > max) max = s;
      }
      let sum = 0;
      for (let j = 0; j < visible; ++j) {
        const e = Math.exp(scores[j] - max);
        scores[j] = e;
        sum += e;
      }
      row.fill(0);
      for (let j = 0; j < visible; ++j) {
        const w = scores[j] / sum;
        const v = base + j * d;
        for (let c = 0; c < d; ++c) row[c] += w * values[v + c];
      }
      output.set(row, q);
    }
  }
  return output;
}
