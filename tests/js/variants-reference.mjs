// Double-precision reference of the attention variants (ARCHITECTURE.md,
// "Attention variants"), written from the contract and independently of the
// core: grouped kv heads, Tq ≤ Tk with query i at pos(i) = Tk − Tq + i, RoPE
// (rotate-half pairs (p, p + d/2)), ALiBi and a given bias, window and sinks.

/** ALiBi slopes for H heads: 2^(−8(h+1)/H) for a power of two, else the paper's interleaving. */
export function alibiSlopes(H) {
  const powerOfTwo = (n) => Array.from({ length: n }, (_, h) => 2 ** ((-8 * (h + 1)) / n));
  const below = 2 ** Math.floor(Math.log2(H));
  if (below === H) return powerOfTwo(H);
  const extra = alibiSlopes(2 * below).filter((_, i) => i % 2 === 0);
  return [...powerOfTwo(below), ...extra.slice(0, H - below)];
}

/** Rotates one row of d values (Float64Array) as at position `pos`. */
export function ropeRow(row, pos, base) {
  const d = row.length;
  const half = d / 2;
  const out = new Float64Array(d);
  for (let p = 0; p < half; p++) {
    const angle = pos * base ** ((-2 * p) / d);
    const [c, s] = [Math.cos(angle), Math.sin(angle)];
    out[p] = row[p] * c - row[p + half] * s;
    out[p + half] = row[p + half] * c + row[p] * s;
  }
  return out;
}

/**
 * Attention on q (B, H, Tq, d), k (B, Hkv, Tk, d), v (B, Hkv, Tk, dv), all
 * flat. Options: factor (the scale), causal, lengths, window, sinks,
 * ropeBase, alibi, biasValues (with biasShape of rank 3 or 4), additive and
 * allowed as functions (b, h, i, j) → number / boolean.
 * Returns Float64Arrays: output, weights, bias (B, H, Tq, Tk), qRotated, kRotated.
 */
export function variantAttention(q, k, v, dims, options = {}) {
  const { B, H, Hkv, Tq, Tk, d, dv } = dims;
  const { factor = 1 / Math.sqrt(d), causal = false, lengths, window, sinks = 0, ropeBase, alibi = false } = options;
  const group = H / Hkv;
  const rotate = (x, heads, T, offset) => {
    const out = Float64Array.from(x);
    if (ropeBase === undefined) return out;
    for (let r = 0; r < B * heads * T; r++) {
      const row = ropeRow(out.subarray(r * d, (r + 1) * d), offset + (r % T), ropeBase);
      out.set(row, r * d);
    }
    return out;
  };
  const qRotated = rotate(q, H, Tq, Tk - Tq);
  const kRotated = rotate(k, Hkv, Tk, 0);
  const slopes = alibiSlopes(H);
  const output = new Float64Array(B * H * Tq * dv);
  const weights = new Float64Array(B * H * Tq * Tk);
  const bias = new Float64Array(B * H * Tq * Tk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvh = Math.floor(h / group);
      for (let i = 0; i < Tq; i++) {
        const pos = Tk - Tq + i;
        const row = new Float64Array(Tk);
        const qOff = ((b * H + h) * Tq + i) * d;
        const at = ((b * H + h) * Tq + i) * Tk;
        for (let j = 0; j < Tk; j++) {
          let visible = !causal || j <= pos;
          if (lengths && j >= lengths[b]) visible = false;
          if (window !== undefined && !(Math.abs(pos - j) < window || j < sinks)) visible = false;
          if (options.allowed && !options.allowed(b, h, i, j)) visible = false;
          let extra = 0;
          if (alibi) extra += -slopes[h] * Math.abs(pos - j);
          if (options.biasValues) {
            const perHead = (h * Tq + i) * Tk + j;
            extra += options.biasValues[options.biasShape.length === 4 ? b * H * Tq * Tk + perHead : perHead];
          }
          bias[at + j] = extra;
          if (options.additive) extra += options.additive(b, h, i, j);
          if (!visible || extra === -Infinity) {
            row[j] = -Infinity;
            continue;
          }
          let s = 0;
          const kOff = ((b * Hkv + kvh) * Tk + j) * d;
          for (let c = 0; c < d; c++) s += qRotated[qOff + c] * kRotated[kOff + c];
          row[j] = s * factor + extra;
        }
        const max = Math.max(...row);
        if (max === -Infinity) continue; // fully masked: zero weights and output
        let sum = 0;
        for (let j = 0; j < Tk; j++) sum += row[j] === -Infinity ? 0 : Math.exp(row[j] - max);
        for (let j = 0; j < Tk; j++) {
          const w = row[j] === -Infinity ? 0 : Math.exp(row[j] - max) / sum;
          weights[at + j] = w;
          if (w === 0) continue;
          const vOff = (b * Hkv + kvh) * Tk * dv + j * dv;
          for (let c = 0; c < dv; c++) output[((b * H + h) * Tq + i) * dv + c] += w * v[vOff + c];
        }
      }
    }
  }
  return { output, weights, bias, qRotated, kRotated };
}
