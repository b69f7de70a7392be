// Double-precision reference of the attention variants (ARCHITECTURE.md,
// "Attention variants"), written from the contract and independently of the
// core: grouped kv heads, Tq ≤ Tk with query i at pos(i) = Tk − Tq + i, RoPE
// (rotate-half pairs (p, p + d/2)), ALiBi and a given bias, window and sinks.
import type { Values } from './reference.js';

/** ALiBi slopes for H heads: 2^(−8(h+1)/H) for a power of two, else the paper's interleaving. */
export function alibiSlopes(H: number): number[] {
  const powerOfTwo = (n: number) => Array.from({ length: n }, (_, h) => 2 ** ((-8 * (h + 1)) / n));
  const below = 2 ** Math.floor(Math.log2(H));
  if (below === H) return powerOfTwo(H);
  const extra = alibiSlopes(2 * below).filter((_, i) => i % 2 === 0);
  return [...powerOfTwo(below), ...extra.slice(0, H - below)];
}

/** One row of d values rotated as at position `pos` (pairs (p, p + d/2), angle pos·base^(−2p/d)). */
export function ropeRow(row: Values, pos: number, base: number): Float64Array {
  const d = row.length;
  const half = d / 2;
  const out = new Float64Array(d);
  for (let p = 0; p < half; p++) {
    const angle = pos * base ** ((-2 * p) / d);
    const c = Math.cos(angle);
    const s = Math.sin(angle);
    out[p] = row[p]! * c - row[p + half]! * s;
    out[p + half] = row[p + half]! * c + row[p]! * s;
  }
  return out;
}

/** The sizes of a variant call: q (B, H, Tq, d), k (B, Hkv, Tk, d), v (B, Hkv, Tk, dv). */
export interface VariantDims {
  B: number;
  H: number;
  Hkv: number;
  Tq: number;
  Tk: number;
  d: number;
  dv: number;
}

/** What a variant call applies; every field is optional. */
export interface VariantOptions {
  /** Multiplies the scores; 1/√d by default. */
  factor?: number;
  /** Query i sees keys j ≤ pos(i) only. */
  causal?: boolean;
  /** Padding: keys j ≥ lengths[b] are hidden in sequence b. */
  lengths?: ArrayLike<number>;
  /** Key j visible only if |pos(i) − j| < window (sinks excepted). */
  window?: number;
  /** Keys j < sinks stay visible through the window. */
  sinks?: number;
  /** Rotary embedding of q and k with this base. */
  ropeBase?: number;
  /** Adds −m_h·|pos(i) − j|. */
  alibi?: boolean;
  /** A given bias, (H, Tq, Tk) or (B, H, Tq, Tk) as biasShape says. */
  biasValues?: Values;
  /** The shape of biasValues. */
  biasShape?: readonly number[];
  /** An additive mask term per (b, h, i, j). */
  additive?: (b: number, h: number, i: number, j: number) => number;
  /** A boolean mask per (b, h, i, j): false hides. */
  allowed?: (b: number, h: number, i: number, j: number) => boolean;
}

/** The variant call's results in doubles. */
export interface VariantSteps {
  /** (B, H, Tq, dv) */
  output: Float64Array;
  /** (B, H, Tq, Tk); a row that sees no key is all 0 */
  weights: Float64Array;
  /** (B, H, Tq, Tk): ALiBi plus the given bias */
  bias: Float64Array;
  /** (B, H, Tq, d): q after RoPE (a copy of q without it) */
  qRotated: Float64Array;
  /** (B, Hkv, Tk, d): k after RoPE (a copy of k without it) */
  kRotated: Float64Array;
}

/** Attention with every variant, on flat q, k and v. */
export function variantAttention(
  q: Values,
  k: Values,
  v: Values,
  dims: VariantDims,
  options: VariantOptions = {},
): VariantSteps {
  const { B, H, Hkv, Tq, Tk, d, dv } = dims;
  const { factor = 1 / Math.sqrt(d), causal = false, lengths, window, sinks = 0 } = options;
  const { ropeBase, alibi = false, biasValues, biasShape } = options;
  const group = H / Hkv;
  const rotate = (x: Values, heads: number, T: number, offset: number) => {
    const out = Float64Array.from(x);
    if (ropeBase === undefined) return out;
    for (let r = 0; r < B * heads * T; r++) {
      out.set(ropeRow(out.subarray(r * d, (r + 1) * d), offset + (r % T), ropeBase), r * d);
    }
    return out;
  };
  const qRotated = rotate(q, H, Tq, Tk - Tq);
  const kRotated = rotate(k, Hkv, Tk, 0);
  const slopes = alibiSlopes(H);
  const output = new Float64Array(B * H * Tq * dv);
  const weights = new Float64Array(B * H * Tq * Tk);
  const bias = new Float64Array(B * H * Tq * Tk);
  const row = new Float64Array(Tk);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const kvh = Math.floor(h / group);
      for (let i = 0; i < Tq; i++) {
        const pos = Tk - Tq + i;
        const qOff = ((b * H + h) * Tq + i) * d;
        const at = ((b * H + h) * Tq + i) * Tk;
        let max = -Infinity;
        for (let j = 0; j < Tk; j++) {
          let visible = !causal || j <= pos;
          if (lengths && j >= lengths[b]!) visible = false;
          if (window !== undefined && !(Math.abs(pos - j) < window || j < sinks)) visible = false;
          if (options.allowed && !options.allowed(b, h, i, j)) visible = false;
          let extra = 0;
          if (alibi) extra += -slopes[h]! * Math.abs(pos - j);
          if (biasValues) {
            const perHead = (h * Tq + i) * Tk + j;
            extra += biasValues[biasShape?.length === 4 ? b * H * Tq * Tk + perHead : perHead]!;
          }
          bias[at + j] = extra;
          if (options.additive) extra += options.additive(b, h, i, j);
          if (!visible || extra === -Infinity) {
            row[j] = -Infinity;
            continue;
          }
          let s = 0;
          const kOff = ((b * Hkv + kvh) * Tk + j) * d;
          for (let c = 0; c < d; c++) s += qRotated[qOff + c]! * kRotated[kOff + c]!;
          row[j] = s * factor + extra;
          max = Math.max(max, row[j]!);
        }
        if (max === -Infinity) continue; // fully masked: zero weights and output
        let sum = 0;
        for (let j = 0; j < Tk; j++) sum += row[j] === -Infinity ? 0 : Math.exp(row[j]! - max);
        for (let j = 0; j < Tk; j++) {
          const w = row[j] === -Infinity ? 0 : Math.exp(row[j]! - max) / sum;
          weights[at + j] = w;
          if (w === 0) continue;
          const vOff = ((b * Hkv + kvh) * Tk + j) * dv;
          const oOff = ((b * H + h) * Tq + i) * dv;
          for (let c = 0; c < dv; c++) output[oOff + c] = output[oOff + c]! + w * v[vOff + c]!;
        }
      }
    }
  }
  return { output, weights, bias, qRotated, kRotated };
}
