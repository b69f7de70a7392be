// What the page checks the engine's float32 results against (the "verified" panel, through
// the package's double-precision reference) and the terms behind a cell that the inspector shows.
import { maskFunction, selfAttentionReference } from 'attnscope/reference';

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

/**
 * Self-attention in doubles through the package's reference (`attnscope/reference`), the one
 * double-precision definition the tests, fuzzers and benchmarks also check against.
 */
export function referenceSelfAttention(inp: ReferenceInput): ReferenceResult {
  const { B, T, C, H, x, wq, wk, wv, scaleFactor, causal, lengths } = inp;
  const mask = maskFunction({ causal, lengths: lengths ?? undefined }, B, H, T);
  const r = selfAttentionReference({ x, B, T, C, wq, wk, wv, heads: H, factor: scaleFactor, mask });
  return { q: r.q, k: r.k, v: r.v, weights: r.weights, concat: r.concat };
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
    if (!(abs <= Infinity))
      return { maxRelError: Number.NaN, maxAbsError: Number.NaN, count: want.length };
    maxAbs = Math.max(maxAbs, abs);
    maxRel = Math.max(maxRel, abs / Math.max(Math.abs(want[i]), floor));
  }
  return { maxRelError: maxRel, maxAbsError: maxAbs, count: want.length };
}

/** Products whose sum is one score: q_i[d]·k_j[d] for every d (terms shown in the inspector). */
export function dotTerms(
  a: ArrayLike<number>,
  b: ArrayLike<number>,
): { terms: number[]; sum: number } {
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
export function weightedValues(
  weights: ArrayLike<number>,
  values: ArrayLike<number>[],
): number[][] {
  return values.map((v, j) => Array.from(v, (x) => weights[j] * x));
}

/** LayerNorm of one entry of a row (γ = 1, β = 0), with the row's mean and (biased) variance. */
export function layerNormTerms(
  row: ArrayLike<number>,
  j: number,
  eps: number,
): { mean: number; variance: number; value: number } {
  let mean = 0;
  for (let k = 0; k < row.length; k++) mean += row[k];
  mean /= row.length;
  let variance = 0;
  for (let k = 0; k < row.length; k++) variance += (row[k] - mean) ** 2;
  variance /= row.length;
  return { mean, variance, value: (row[j] - mean) / Math.sqrt(variance + eps) };
}
