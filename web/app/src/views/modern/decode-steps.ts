// KV-cache decoding on the engine: the whole sentence once with the causal mask, then
// each token as one decode step (Tq = 1) against the keys and values cached so far
// (kvShape), and how far each step's output row is from the full run's row.
import type { AttentionResult } from 'attnscope';
import type { Engine, HeadTensors } from './engine-call';
import { maxAbsDiff } from './engine-call';

export interface DecodeStep {
  weights: Float32Array; // (H, 1, t + 1): the new query's row
  output: Float32Array; // (H, 1, dV)
  fullRow: Float32Array; // (H, dV): row t of the full causal run
  maxDiff: number;
}

/** Rows [0, n) of every head of an (H, T, d) array: the cache after n tokens. */
export function firstRows(data: Float32Array, H: number, T: number, d: number, n: number) {
  const out = new Float32Array(H * n * d);
  for (let h = 0; h < H; h++) out.set(data.subarray(h * T * d, (h * T + n) * d), h * n * d);
  return out;
}

/** Row t of every head of an (H, T, d) array: (H, 1, d). */
export function rowOfHeads(data: Float32Array, H: number, T: number, d: number, t: number) {
  const out = new Float32Array(H * d);
  for (let h = 0; h < H; h++) out.set(data.subarray((h * T + t) * d, (h * T + t + 1) * d), h * d);
  return out;
}

export async function decodeSteps(engine: Engine, t: HeadTensors): Promise<DecodeStep[]> {
  const { H, T, dK, dV } = t;
  const full: AttentionResult = await engine.attention({
    q: t.q,
    k: t.k,
    v: t.v,
    shape: [H, T, dK],
    dv: dV,
    scale: t.scale,
    mask: 'causal',
    trace: false,
  });
  const steps: DecodeStep[] = [];
  for (let s = 0; s < T; s++) {
    const n = s + 1;
    const step = await engine.attention({
      q: rowOfHeads(t.q, H, T, dK, s),
      k: firstRows(t.k, H, T, dK, n),
      v: firstRows(t.v, H, T, dV, n),
      shape: [H, 1, dK],
      kvShape: [H, n, dK],
      dv: dV,
      scale: t.scale,
      mask: 'causal',
      trace: true,
    });
    const fullRow = rowOfHeads(full.output.data, H, T, dV, s);
    steps.push({
      weights: step.trace!.weights.data,
      output: step.output.data,
      fullRow,
      maxDiff: maxAbsDiff(step.output.data, fullRow),
    });
  }
  return steps;
}

/** Multiply-adds of step n (n tokens so far, one new): with the cache, and recomputing the prefix. */
export function decodeCost(p: { n: number; C: number; H: number; dK: number; dV: number }) {
  const project = p.C * p.H * (2 * p.dK + p.dV); // q, k and v of one token
  const attend = (keys: number) => p.H * keys * (p.dK + p.dV); // one query: q·k and weights·v
  const cached = project + attend(p.n);
  const recomputed = p.n * project + ((p.H * (p.n * (p.n + 1))) / 2) * (p.dK + p.dV);
  return { cached, recomputed };
}
