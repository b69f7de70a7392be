// Double-precision references of attention's gradients, written from the
// chain rule on the softmax (independent of the engine): what
// engine.attentionBackward must match, and what finite differences check.
import { attendHead, maskFunction, type MaskDescription, type Values } from './reference.js';
import { ropeRow } from './reference-variants.js';

/** dq (T, dk), dk (T, dk), dv (T, dv) of one head, in doubles. */
export interface HeadGradients {
  dq: Float64Array;
  dk: Float64Array;
  dv: Float64Array;
}

/**
 * Gradients of L = Σ dOutput ∘ output for one head of attendHead(q, k, v, T, dk, dv, factor, mask):
 * dv = Pᵀ·dO, dS = P ∘ (dO·vᵀ − rowsum(P ∘ dO·vᵀ)), dq = factor·dS·k, dk = factor·dSᵀ·q.
 */
export function attendHeadBackward(
  q: Values,
  k: Values,
  v: Values,
  dOutput: Values,
  T: number,
  dk: number,
  dv: number,
  factor: number,
  mask?: (i: number, j: number) => number,
): HeadGradients {
  const { weights } = attendHead(q, k, v, T, dk, dv, factor, mask);
  const g: HeadGradients = {
    dq: new Float64Array(T * dk),
    dk: new Float64Array(T * dk),
    dv: new Float64Array(T * dv),
  };
  const dp = new Float64Array(T);
  for (let i = 0; i < T; i++) {
    let centre = 0;
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let c = 0; c < dv; c++) s += dOutput[i * dv + c]! * v[j * dv + c]!;
      dp[j] = s;
      centre += weights[i * T + j]! * s;
    }
    for (let j = 0; j < T; j++) {
      const p = weights[i * T + j]!;
      const ds = p * (dp[j]! - centre) * factor;
      for (let c = 0; c < dv; c++) g.dv[j * dv + c]! += p * dOutput[i * dv + c]!;
      for (let c = 0; c < dk; c++) {
        g.dq[i * dk + c]! += ds * k[j * dk + c]!;
        g.dk[j * dk + c]! += ds * q[i * dk + c]!;
      }
    }
  }
  return g;
}

/** Each row t of a head's (T, d) rows rotated as at position `sign`·t (sign −1 undoes the rotation). */
function ropeRows(x: Values, T: number, d: number, base: number, sign: 1 | -1): Float64Array {
  const out = new Float64Array(T * d);
  for (let t = 0; t < T; t++) {
    out.set(ropeRow(Array.prototype.slice.call(x, t * d, (t + 1) * d), sign * t, base), t * d);
  }
  return out;
}

/**
 * The same for q, k (B, H, T, dk), v and dOutput (B, H, T, dv), head by head, with the masks of
 * maskFunction (causal, padding lengths, additive, boolean). With `ropeBase`, the scores use q and
 * k rotated at their positions, and dq, dk are the rotated inputs' gradients rotated back
 * (a rotation's transpose is its inverse).
 */
export function attentionBackwardReference(
  q: Values,
  k: Values,
  v: Values,
  dOutput: Values,
  shape: { B: number; H: number; T: number; dk: number; dv: number },
  factor: number,
  mask: MaskDescription = {},
  { ropeBase }: { ropeBase?: number } = {},
): HeadGradients {
  const { B, H, T, dk, dv } = shape;
  const masks = maskFunction(mask, B, H, T);
  const out: HeadGradients = {
    dq: new Float64Array(B * H * T * dk),
    dk: new Float64Array(B * H * T * dk),
    dv: new Float64Array(B * H * T * dv),
  };
  const slice = (x: Values, head: number, width: number) =>
    Array.prototype.slice.call(x, head * T * width, (head + 1) * T * width) as number[];
  const rotate = (x: Values, sign: 1 | -1) =>
    ropeBase === undefined ? x : ropeRows(x, T, dk, ropeBase, sign);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const head = b * H + h;
      const g = attendHeadBackward(
        rotate(slice(q, head, dk), 1),
        rotate(slice(k, head, dk), 1),
        slice(v, head, dv),
        slice(dOutput, head, dv),
        T,
        dk,
        dv,
        factor,
        masks(b, h),
      );
      out.dq.set(rotate(g.dq, -1), head * T * dk);
      out.dk.set(rotate(g.dk, -1), head * T * dk);
      out.dv.set(g.dv, head * T * dv);
    }
  }
  return out;
}
