// Double-precision reference of multi-head self-attention, used only to check the
// engine's float32 results (the "verified" panel) and to show the terms behind a
// cell. It follows the textbook formulas literally; speed is not its purpose.

/** Sizes of one self-attention computation: batch, tokens, model width, heads, head widths. */
export interface AttentionSizes {
  B: number;
  T: number;
  C: number;
  H: number;
  dK: number;
  dV: number;
}

export interface ReferenceInput extends AttentionSizes {
  x: ArrayLike<number>; // (B, T, C)
  wq: ArrayLike<number>; // (C, H·dK)
  wk: ArrayLike<number>;
  wv: ArrayLike<number>; // (C, H·dV)
  scaleFactor: number;
  causal: boolean;
  lengths: number[] | null; // keys at or beyond lengths[b] are padding
}

export interface ReferenceResult {
  q: Float64Array; // (B, H, T, dK)
  k: Float64Array;
  v: Float64Array; // (B, H, T, dV)
  weights: Float64Array; // (B, H, T, T)
  concat: Float64Array; // (B, T, H·dV)
}

function project(inp: ReferenceInput, w: ArrayLike<number>, d: number): Float64Array {
  const { B, T, C, H, x } = inp;
  const out = new Float64Array(B * H * T * d);
  const cols = H * d;
  for (let b = 0; b < B; b++)
    for (let t = 0; t < T; t++)
      for (let col = 0; col < cols; col++) {
        let s = 0;
        for (let c = 0; c < C; c++) s += x[(b * T + t) * C + c] * w[c * cols + col];
        const h = Math.floor(col / d);
        out[((b * H + h) * T + t) * d + (col % d)] = s;
      }
  return out;
}

export function isMasked(inp: Pick<ReferenceInput, 'causal' | 'lengths'>, b: number, i: number, j: number): boolean {
  if (inp.causal && j > i) return true;
  if (inp.lengths && j >= inp.lengths[b]) return true;
  return false;
}

export function referenceSelfAttention(inp: ReferenceInput): ReferenceResult {
  const { B, T, H, dK, dV } = inp;
  const q = project(inp, inp.wq, dK);
  const k = project(inp, inp.wk, dK);
  const v = project(inp, inp.wv, dV);
  const weights = new Float64Array(B * H * T * T);
  const concat = new Float64Array(B * T * H * dV);
  const row = new Float64Array(T);
  for (let b = 0; b < B; b++)
    for (let h = 0; h < H; h++) {
      const base = (b * H + h) * T;
      for (let i = 0; i < T; i++) {
        let max = -Infinity;
        for (let j = 0; j < T; j++) {
          if (isMasked(inp, b, i, j)) {
            row[j] = -Infinity;
            continue;
          }
          let s = 0;
          for (let d = 0; d < dK; d++) s += q[(base + i) * dK + d] * k[(base + j) * dK + d];
          row[j] = s * inp.scaleFactor;
          max = Math.max(max, row[j]);
        }
        if (max === -Infinity) continue; // fully masked row: weights and output stay 0
        let sum = 0;
        for (let j = 0; j < T; j++) sum += row[j] === -Infinity ? 0 : Math.exp(row[j] - max);
        for (let j = 0; j < T; j++) {
          const w = row[j] === -Infinity ? 0 : Math.exp(row[j] - max) / sum;
          weights[(base + i) * T + j] = w;
          for (let d = 0; d < dV; d++) concat[((b * T + i) * H + h) * dV + d] += w * v[(base + j) * dV + d];
        }
      }
    }
  return { q, k, v, weights, concat };
}

export interface Comparison {
  maxRelError: number;
  maxAbsError: number;
  count: number;
}

/**
 * Largest relative error of `got` against `want`. Entries below 1% of the largest
 * magnitude use that 1% as the denominator: float32 sums whose terms cancel are only
 * accurate relative to the size of the terms, not of the tiny result.
 */
export function compare(got: ArrayLike<number>, want: ArrayLike<number>): Comparison {
  let scale = 0;
  for (let i = 0; i < want.length; i++) scale = Math.max(scale, Math.abs(want[i]));
  const floor = Math.max(scale * 1e-2, 1e-30);
  let maxRel = 0;
  let maxAbs = 0;
  for (let i = 0; i < want.length; i++) {
    const abs = Math.abs(got[i] - want[i]);
    if (!(abs <= Infinity)) return { maxRelError: Number.NaN, maxAbsError: Number.NaN, count: want.length };
    maxAbs = Math.max(maxAbs, abs);
    maxRel = Math.max(maxRel, abs / Math.max(Math.abs(want[i]), floor));
  }
  return { maxRelError: maxRel, maxAbsError: maxAbs, count: want.length };
}

/** Products whose sum is one score: q_i[d]·k_j[d] for every d (terms shown in the inspector). */
export function dotTerms(a: ArrayLike<number>, b: ArrayLike<number>): { terms: number[]; sum: number } {
  const terms: number[] = [];
  let sum = 0;
  for (let i = 0; i < a.length; i++) {
    terms.push(a[i] * b[i]);
    sum += a[i] * b[i];
  }
  return { terms, sum };
}

/** exp(s_j − max) for a row of masked scores, and their sum (the softmax denominator). */
export function softmaxTerms(row: ArrayLike<number>): { max: number; exps: number[]; sum: number } {
  let max = -Infinity;
  for (let j = 0; j < row.length; j++) max = Math.max(max, row[j]);
  const exps: number[] = [];
  let sum = 0;
  for (let j = 0; j < row.length; j++) {
    const e = row[j] === -Infinity || max === -Infinity ? 0 : Math.exp(row[j] - max);
    exps.push(e);
    sum += e;
  }
  return { max, exps, sum };
}

/** weight_j · v_j for every key j: the weighted values that sum to one output row. */
export function weightedValues(weights: ArrayLike<number>, values: ArrayLike<number>[]): number[][] {
  return values.map((v, j) => Array.from(v, (x) => weights[j] * x));
}

/** LayerNorm of one entry of a row (γ = 1, β = 0), with the row's mean and (biased) variance. */
export function layerNormTerms(row: ArrayLike<number>, j: number, eps: number): { mean: number; variance: number; value: number } {
  let mean = 0;
  for (let k = 0; k < row.length; k++) mean += row[k];
  mean /= row.length;
  let variance = 0;
  for (let k = 0; k < row.length; k++) variance += (row[k] - mean) ** 2;
  variance /= row.length;
  return { mean, variance, value: (row[j] - mean) / Math.sqrt(variance + eps) };
}
