// attnscope/reference: the attention math written plainly from its
// definitions in double precision, independent of the engine, to check the
// engine's float32 results against (the package's tests, fuzzers and
// benchmarks use it), plus the seeded generator their inputs come from.
// Nothing here is fast: every step is kept, as the traced path keeps it.

/** Numbers as the reference takes them: typed arrays or plain arrays, row-major. */
export type Values = ArrayLike<number>;

/** mulberry32: a small, well-mixed 32-bit generator of floats in [0, 1), reproducible from `seed`. */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** (rows, inner) · (inner, cols), plus an optional bias (cols), in doubles. */
export function matmul(
  a: Values,
  rows: number,
  inner: number,
  b: Values,
  cols: number,
  bias?: Values | null,
): Float64Array {
  const out = new Float64Array(rows * cols);
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < cols; j++) {
      let s = bias ? bias[j]! : 0;
      for (let k = 0; k < inner; k++) s += a[i * inner + k]! * b[k * cols + j]!;
      out[i * cols + j] = s;
    }
  }
  return out;
}

/** The additive mask term of query i and key j: 0, -Infinity (hidden) or a number. */
export type HeadMaskFunction = (i: number, j: number) => number;

/** Every step of one head's attention, in doubles. */
export interface HeadSteps {
  /** (T, T) q·kᵀ */
  scores: Float64Array;
  /** (T, T) scores · factor */
  scaled: Float64Array;
  /** (T, T) scaled + mask */
  masked: Float64Array;
  /** (T, T) softmax over keys; a row that sees no key is all 0 */
  weights: Float64Array;
  /** (T, dv) weights · v */
  output: Float64Array;
  /** (T) 1 where the query sees no key */
  fullyMasked: Uint8Array;
}

/** Attention of one head: q (T, dk), k (T, dk), v (T, dv); scores multiplied by `factor`. */
export function attendHead(
  q: Values,
  k: Values,
  v: Values,
  T: number,
  dk: number,
  dv: number,
  factor: number,
  /** The mask terms of each (sequence, head), as maskFunction gives them; none by default. */
  mask: HeadMaskFunction = () => 0,
): HeadSteps {
  const scores = new Float64Array(T * T);
  const scaled = new Float64Array(T * T);
  const masked = new Float64Array(T * T);
  const weights = new Float64Array(T * T);
  const output = new Float64Array(T * dv);
  const fullyMasked = new Uint8Array(T);
  for (let i = 0; i < T; i++) {
    let max = -Infinity;
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let c = 0; c < dk; c++) s += q[i * dk + c]! * k[j * dk + c]!;
      scores[i * T + j] = s;
      scaled[i * T + j] = s * factor;
      masked[i * T + j] = s * factor + mask(i, j);
      max = Math.max(max, masked[i * T + j]!);
    }
    if (max === -Infinity) {
      fullyMasked[i] = 1; // every key hidden: zero weights and output, by definition
      continue;
    }
    let sum = 0;
    for (let j = 0; j < T; j++) sum += weights[i * T + j] = Math.exp(masked[i * T + j]! - max);
    for (let j = 0; j < T; j++) weights[i * T + j] = weights[i * T + j]! / sum;
    for (let c = 0; c < dv; c++) {
      let s = 0;
      for (let j = 0; j < T; j++) s += weights[i * T + j]! * v[j * dv + c]!;
      output[i * dv + c] = s;
    }
  }
  return { scores, scaled, masked, weights, output, fullyMasked };
}

/** The masks of a batch as the engine takes them (additive/allowed: (T, T), (B, T, T) or (B, H, T, T)). */
export interface MaskDescription {
  /** Query i sees keys j ≤ i only. */
  causal?: boolean;
  /** Padding: keys j ≥ lengths[b] are hidden in sequence b. */
  lengths?: ArrayLike<number>;
  /** Added to the scaled scores; -Infinity hides. */
  additive?: Values;
  /** Boolean mask: 0 hides, anything else lets through. */
  allowed?: Values;
}

/** Per (sequence b, head h), the additive mask term of each (query, key). */
export function maskFunction(
  spec: MaskDescription,
  B: number,
  H: number,
  T: number,
): (b: number, h: number) => HeadMaskFunction {
  const { causal = false, lengths, additive, allowed } = spec;
  const pick = (data: Values, b: number, h: number, i: number, j: number): number => {
    if (data.length === T * T) return data[i * T + j]!;
    if (data.length === B * T * T) return data[(b * T + i) * T + j]!;
    return data[((b * H + h) * T + i) * T + j]!;
  };
  return (b, h) => (i, j) => {
    if (causal && j > i) return -Infinity;
    if (lengths && j >= lengths[b]!) return -Infinity;
    if (allowed && !pick(allowed, b, h, i, j)) return -Infinity;
    return additive ? pick(additive, b, h, i, j) : 0;
  };
}

/** values[from, to) without copying a typed array. */
function rows(values: Values, from: number, to: number): Values {
  if (ArrayBuffer.isView(values)) return (values as unknown as Float64Array).subarray(from, to);
  return Array.prototype.slice.call(values, from, to) as number[];
}

/** Multi-head self-attention's inputs: x (B, T, C), weights (C, H·d), optional biases and W_O. */
export interface SelfAttentionInput {
  /** Inputs (B, T, C), row-major. */
  x: Values;
  /** Sequences in the batch. */
  B: number;
  /** Tokens per sequence. */
  T: number;
  /** Width of each token. */
  C: number;
  /** W_Q (C, H·dk). */
  wq: Values;
  /** W_K (C, H·dk). */
  wk: Values;
  /** W_V (C, H·dv). */
  wv: Values;
  /** Optional bias of Q (H·dk). */
  bq?: Values | null;
  /** Optional bias of K (H·dk). */
  bk?: Values | null;
  /** Optional bias of V (H·dv). */
  bv?: Values | null;
  /** Optional output projection W_O (H·dv, cOut). */
  wo?: Values | null;
  /** Optional bias of the output (cOut). */
  bo?: Values | null;
  /** H, the number of heads. */
  heads: number;
  /** What the scores are multiplied by (1/√dk for the usual scaling). */
  factor: number;
  /** The mask terms of each (sequence, head), as maskFunction gives them; none by default. */
  mask?: ((b: number, h: number) => HeadMaskFunction) | null;
}

/** Every step of multi-head self-attention, in doubles. */
export interface SelfAttentionSteps {
  /** (B, T, cOut) */
  output: Float64Array;
  /** (B, H, T, dk) */
  q: Float64Array;
  /** (B, H, T, dk) */
  k: Float64Array;
  /** (B, H, T, dv) */
  v: Float64Array;
  /** (B, H, T, T) */
  scores: Float64Array;
  /** (B, H, T, T) */
  weights: Float64Array;
  /** (B, T, H·dv) */
  concat: Float64Array;
  /** (B, H, T) */
  fullyMasked: Uint8Array;
  /** Width of each output row (W_O's width, else H·dv). */
  cOut: number;
}

/**
 * Multi-head self-attention in doubles. Head h takes columns [h·d, (h+1)·d) of
 * X·W_Q, X·W_K and X·W_V; the heads are concatenated in order, then W_O applies.
 */
export function selfAttentionReference(input: SelfAttentionInput): SelfAttentionSteps {
  const { x, B, T, C, wq, wk, wv, bq, bk, bv, wo, bo, heads, factor } = input;
  const Hdk = wq.length / C;
  const Hdv = wv.length / C;
  const dk = Hdk / heads;
  const dv = Hdv / heads;
  const cOut = wo ? wo.length / Hdv : Hdv;
  const maskOf = input.mask ?? (() => () => 0);
  const q = new Float64Array(B * heads * T * dk);
  const k = new Float64Array(B * heads * T * dk);
  const v = new Float64Array(B * heads * T * dv);
  const weights = new Float64Array(B * heads * T * T);
  const scores = new Float64Array(B * heads * T * T);
  const concat = new Float64Array(B * T * Hdv);
  const fullyMasked = new Uint8Array(B * heads * T);
  const output = new Float64Array(B * T * cOut);
  for (let b = 0; b < B; b++) {
    const xb = rows(x, b * T * C, (b + 1) * T * C);
    const Q = matmul(xb, T, C, wq, Hdk, bq);
    const K = matmul(xb, T, C, wk, Hdk, bk);
    const V = matmul(xb, T, C, wv, Hdv, bv);
    for (let h = 0; h < heads; h++) {
      const qh = new Float64Array(T * dk);
      const kh = new Float64Array(T * dk);
      const vh = new Float64Array(T * dv);
      for (let t = 0; t < T; t++) {
        for (let c = 0; c < dk; c++) {
          qh[t * dk + c] = Q[t * Hdk + h * dk + c]!;
          kh[t * dk + c] = K[t * Hdk + h * dk + c]!;
        }
        for (let c = 0; c < dv; c++) vh[t * dv + c] = V[t * Hdv + h * dv + c]!;
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
        for (let c = 0; c < dv; c++) concat[(b * T + t) * Hdv + h * dv + c] = r.output[t * dv + c]!;
      }
    }
    const cb = concat.subarray(b * T * Hdv, (b + 1) * T * Hdv);
    output.set(wo ? matmul(cb, T, Hdv, wo, cOut, bo) : cb, b * T * cOut);
  }
  return { output, q, k, v, scores, weights, concat, fullyMasked, cOut };
}

/** LayerNorm over the last dimension (biased variance), in doubles; gamma/beta default to 1/0. */
export function layerNormReference(
  x: Values,
  rows: number,
  C: number,
  gamma: Values | null | undefined,
  beta: Values | null | undefined,
  eps: number,
): Float64Array {
  const out = new Float64Array(rows * C);
  for (let r = 0; r < rows; r++) {
    let mean = 0;
    for (let c = 0; c < C; c++) mean += x[r * C + c]!;
    mean /= C;
    let variance = 0;
    for (let c = 0; c < C; c++) variance += (x[r * C + c]! - mean) ** 2;
    variance /= C;
    const inv = 1 / Math.sqrt(variance + eps);
    for (let c = 0; c < C; c++) {
      out[r * C + c] =
        (x[r * C + c]! - mean) * inv * (gamma ? gamma[c]! : 1) + (beta ? beta[c]! : 0);
    }
  }
  return out;
}

/** The error function to about 1e-15 (a Taylor series below 3, a continued fraction above). */
export function erf(x: number): number {
  const sign = x < 0 ? -1 : 1;
  const ax = Math.abs(x);
  if (ax < 3) {
    // erf(x) = 2/√π Σ (-1)^n x^(2n+1) / (n! (2n+1))
    let sum = 0;
    let term = ax;
    for (let n = 0; n < 100; n++) {
      sum += term / (2 * n + 1);
      term *= (-ax * ax) / (n + 1);
      if (Math.abs(term) < 1e-17) break;
    }
    return (sign * 2 * sum) / Math.sqrt(Math.PI);
  }
  let f = 0;
  for (let n = 60; n >= 1; n--) f = n / 2 / (ax + f);
  const erfc = Math.exp(-ax * ax) / Math.sqrt(Math.PI) / (ax + f);
  return sign * (1 - erfc);
}

/** The exact GELU, x·Φ(x). */
export const gelu = (v: number): number => 0.5 * v * (1 + erf(v / Math.SQRT2));
/** ReLU, max(0, x). */
export const relu = (v: number): number => Math.max(0, v);

export * from './reference-variants.js';
export * from './reference-gpt2.js';
export * from './reference-backward.js';
export * from './reference-gpt2-attribution.js';
