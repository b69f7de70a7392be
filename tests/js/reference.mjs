// Plain double-precision reference of the attention math, written
// independently of the core, plus small test utilities.
import assert from 'node:assert/strict';

/** Deterministic uniform numbers in [lo, hi) (mulberry32). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    floats(n, lo = -1, hi = 1) {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * next();
      return out;
    },
    int(lo, hi) {
      return lo + Math.floor(next() * (hi - lo + 1));
    },
  };
}

/** (rows, inner) · (inner, cols) in doubles, plus an optional bias (cols). */
export function matmul(a, rows, inner, b, cols, bias) {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let s = bias ? bias[j] : 0;
      for (let k = 0; k < inner; k++) s += a[i * inner + k] * b[k * cols + j];
      out[i * cols + j] = s;
    }
  }
  return out;
}

/**
 * Attention of one head: q (T, dk), k (T, dk), v (T, dv) as double arrays.
 * mask(i, j) → additive term (0, -Infinity or a number). Returns every step.
 */
export function attendHead(q, k, v, T, dk, dv, factor, mask) {
  const scores = new Float64Array(T * T);
  const scaled = new Float64Array(T * T);
  const masked = new Float64Array(T * T);
  const weights = new Float64Array(T * T);
  const output = new Float64Array(T * dv);
  let fullyMasked = new Uint8Array(T);
  for (let i = 0; i < T; i++) {
    let max = -Infinity;
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let c = 0; c < dk; c++) s += q[i * dk + c] * k[j * dk + c];
      scores[i * T + j] = s;
      scaled[i * T + j] = s * factor;
      masked[i * T + j] = s * factor + mask(i, j);
      max = Math.max(max, masked[i * T + j]);
    }
    if (max === -Infinity) {
      fullyMasked[i] = 1; // every key masked: zero weights and output by definition
      continue;
    }
    let sum = 0;
    for (let j = 0; j < T; j++) sum += (weights[i * T + j] = Math.exp(masked[i * T + j] - max));
    for (let j = 0; j < T; j++) weights[i * T + j] /= sum;
    for (let c = 0; c < dv; c++) {
      let s = 0;
      for (let j = 0; j < T; j++) s += weights[i * T + j] * v[j * dv + c];
      output[i * dv + c] = s;
    }
  }
  return { scores, scaled, masked, weights, output, fullyMasked };
}

/** Additive mask term for (b, h, i, j) from a MaskSpec-like description. */
export function maskFunction(spec, B, H, T) {
  const { causal = false, lengths, additive, allowed } = spec;
  const pick = (data, b, h, i, j) => {
    if (data.length === T * T) return data[i * T + j];
    if (data.length === B * T * T) return data[(b * T + i) * T + j];
    return data[((b * H + h) * T + i) * T + j];
  };
  return (b, h) => (i, j) => {
    if (causal && j > i) return -Infinity;
    if (lengths && j >= lengths[b]) return -Infinity;
    if (allowed && !pick(allowed, b, h, i, j)) return -Infinity;
    return additive ? pick(additive, b, h, i, j) : 0;
  };
}

/** Multi-head self-attention in doubles; x (B, T, C); heads split as in the core's convention. */
export function selfAttentionReference({ x, B, T, C, wq, wk, wv, bq, bk, bv, wo, bo, heads, factor, mask }) {
  const Hdk = wq.length / C;
  const Hdv = wv.length / C;
  const dk = Hdk / heads;
  const dv = Hdv / heads;
  const cOut = wo ? wo.length / Hdv : Hdv;
  const maskOf = mask ?? (() => () => 0);
  const q = new Float64Array(B * heads * T * dk);
  const k = new Float64Array(B * heads * T * dk);
  const v = new Float64Array(B * heads * T * dv);
  const weights = new Float64Array(B * heads * T * T);
  const scores = new Float64Array(B * heads * T * T);
  const concat = new Float64Array(B * T * Hdv);
  const fullyMasked = new Uint8Array(B * heads * T);
  const output = new Float64Array(B * T * cOut);
  for (let b = 0; b < B; b++) {
    const xb = x.subarray(b * T * C, (b + 1) * T * C);
    const Q = matmul(xb, T, C, wq, Hdk, bq);
    const K = matmul(xb, T, C, wk, Hdk, bk);
    const V = matmul(xb, T, C, wv, Hdv, bv);
    for (let h = 0; h < heads; h++) {
      const qh = new Float64Array(T * dk);
      const kh = new Float64Array(T * dk);
      const vh = new Float64Array(T * dv);
      for (let t = 0; t < T; t++) {
        for (let c = 0; c < dk; c++) {
          qh[t * dk + c] = Q[t * Hdk + h * dk + c];
          kh[t * dk + c] = K[t * Hdk + h * dk + c];
        }
        for (let c = 0; c < dv; c++) vh[t * dv + c] = V[t * Hdv + h * dv + c];
      }
      const r = attendHead(qh, kh, vh, T, dk, dv, factor, maskOf(b, h));
      const bh = b * heads + h;
      q.set(qh, bh * T * dk);
      k.set(kh, bh * T * dk);
      v.set(vh, bh * T * dv);
      weights.set(r.weights, bh * T * T);
      scores.set(r.scores, bh * T * T);
      fullyMasked.set(r.fullyMasked, bh * T);
      for (let t = 0; t < T; t++) {
        for (let c = 0; c < dv; c++) concat[(b * T + t) * Hdv + h * dv + c] = r.output[t * dv + c];
      }
    }
    const cb = concat.subarray(b * T * Hdv, (b + 1) * T * Hdv);
    output.set(wo ? matmul(cb, T, Hdv, wo, cOut, bo) : cb, b * T * cOut);
  }
  return { output, q, k, v, scores, weights, concat, fullyMasked, cOut };
}

/** Asserts |actual − expected| ≤ atol + rtol·|expected| element-wise (equal infinities pass). */
export function assertClose(actual, expected, { atol = 2e-5, rtol = 2e-5, what = 'value' } = {}) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (a === e) continue;
    const ok = Math.abs(a - e) <= atol + rtol * Math.abs(e);
    if (!ok) assert.fail(`${what}[${i}]: got ${a}, expected ${e}`);
  }
}

/** Layer norm over the last dimension in doubles. */
export function layerNormReference(x, rows, C, gamma, beta, eps) {
  const out = new Float64Array(rows * C);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    for (let c = 0; c < C; c++) mean += x[r * C + c];
    mean /= C;
    let variance = 0;
    for (let c = 0; c < C; c++) variance += (x[r * C + c] - mean) ** 2;
    variance /= C;
    const inv = 1 / Math.sqrt(variance + eps);
    for (let c = 0; c < C; c++) {
      out[r * C + c] = (x[r * C + c] - mean) * inv * (gamma ? gamma[c] : 1) + (beta ? beta[c] : 0);
    }
  }
  return out;
}

/** erf by Abramowitz–Stegun 7.1.26 is too coarse; use a series/continued fraction accurate to ~1e-15. */
export function erf(x) {
  const sign = x < 0 ? -1 : 1;
  const ax = Math.abs(x);
  if (ax < 3) {
    // Taylor series: erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1))
    let sum = 0;
    let term = ax;
    for (let n = 0; n < 100; n++) {
      sum += term / (2 * n + 1);
      term *= (-ax * ax) / (n + 1);
      if (Math.abs(term) < 1e-17) break;
    }
    return (sign * 2 * sum) / Math.sqrt(Math.PI);
  }
  // Continued fraction for erfc at larger |x|.
  let f = 0;
  for (let n = 60; n >= 1; n--) f = n / 2 / (ax + f);
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f);
  return sign * (1 - erfc);
}

export const gelu = (v) => 0.5 * v * (1 + erf(v / Math.SQRT2));
export const relu = (v) => Math.max(0, v);
