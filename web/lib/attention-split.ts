// Splitting one `attention` call into independent parts by batch or by head,
// and merging the parts' results. Heads never read each other's data, so each
// part runs exactly the computation the whole call would run on its slice, and
// the merged result is bit for bit the single-engine result. With grouped keys
// and values (kvShape with Hkv < H) a part takes whole kv heads with their
// groups of H / Hkv query heads, so every query head keeps its kv head.
// ALiBi's slopes depend on the head's index among all H, and a given bias is
// not sliced here: calls with a bias split by batch only, or run whole.
//
// Only plainly splittable calls are split: flat typed-array q, k, v with an
// explicit shape whose sizes agree, and masks whose shape is known. Anything
// else (nested inputs, broadcast masks, bad sizes) is left whole, so the engine
// itself validates it and reports its usual error.
import { honestTypedArray, own, product } from './tensors.js';
import type { AttentionArgs, AttentionResult, MaskSpec, TensorOut } from './types.js';

type Flat = Float32Array | Float64Array;
type MaskObject = Exclude<MaskSpec, string>;
type MaskTensor = Float32Array | Float64Array | Uint8Array | readonly number[] | readonly boolean[];

/** How a call was split: along which axis of `shape`, into which contiguous ranges. */
export interface AttentionSplit {
  /** Each part's arguments, and its fresh q, k, v buffers (safe to move to a worker). */
  parts: { args: AttentionArgs; transfer: ArrayBuffer[] }[];
  /** Index of the split axis in q's shape (and in every result shape). */
  axis: number;
}

/** A caller's q, k or v as an honest view (its own `length` cannot lie), or undefined unless it is a Float32Array or Float64Array. */
function flatInput(x: unknown): Flat | undefined {
  const view = honestTypedArray(x);
  return view instanceof Uint8Array ? undefined : view;
}
const isFlat = (x: unknown): x is Flat => flatInput(x) !== undefined;
const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isInteger(n) && n > 0;

/** `count` items in `parts` contiguous ranges whose sizes differ by at most one. */
function ranges(count: number, parts: number): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0, start = 0; i < parts; i++) {
    const end = start + Math.floor(count / parts) + (i < count % parts ? 1 : 0);
    out.push([start, end]);
    start = end;
  }
  return out;
}

/**
 * FLOPs the fast path spends on a call: Q·Kᵀ and P·V, 2·Tq·Tk·(d + d_v) per
 * head, half of it under a causal mask (its kernel skips the masked tiles).
 */
export function attentionFlops(
  units: number,
  queryLength: number,
  d: number,
  dv: number,
  mask: MaskSpec | undefined,
  keyLength = queryLength,
): number {
  const causal = mask === 'causal' || own(mask, 'causal') === true;
  return (causal ? 1 : 2) * units * queryLength * keyLength * (d + dv);
}

/** The dense shape of a mask tensor, when it can be known without validating it. */
function maskShape(data: unknown, shape: unknown, candidates: number[][]): number[] | undefined {
  if (shape !== undefined) {
    return Array.isArray(shape) && shape.every(isCount) ? [...shape] : undefined;
  }
  const flat =
    data instanceof Uint8Array ||
    isFlat(data) ||
    (Array.isArray(data) && !data.some(Array.isArray));
  if (!flat) return undefined;
  const length = (data as ArrayLike<unknown>).length;
  return candidates.find((c) => product(c) === length);
}

/**
 * Splits `args` into at most `maxParts` parts, or returns undefined when the
 * call should run whole: too small (`minFlops`), not splittable, or not valid.
 */
export function splitAttention(
  args: AttentionArgs,
  maxParts: number,
  minFlops: number,
): AttentionSplit | undefined {
  const [q, k, v] = [
    flatInput(own(args, 'q')),
    flatInput(own(args, 'k')),
    flatInput(own(args, 'v')),
  ];
  const shape = own(args, 'shape') as number[];
  const kvShapeArg = own(args, 'kvShape') as number[] | undefined;
  const kvShape = kvShapeArg ?? shape;
  const mask = own(args, 'mask') as MaskSpec | undefined;
  const bias = own(args, 'bias');
  if (!q || !k || !v || !Array.isArray(shape) || !Array.isArray(kvShape)) return undefined;
  if ((shape.length !== 3 && shape.length !== 4) || !shape.every(isCount)) return undefined;
  if (kvShape.length !== shape.length || !kvShape.every(isCount)) return undefined;
  const [batch, heads, queryLength, d] = (shape.length === 4 ? shape : [1, ...shape]) as [
    number,
    number,
    number,
    number,
  ];
  const [kvBatch, kvHeads, keyLength, kd] = (kvShape.length === 4 ? kvShape : [1, ...kvShape]) as [
    number,
    number,
    number,
    number,
  ];
  if (kvBatch !== batch || kd !== d || heads % kvHeads !== 0 || queryLength > keyLength)
    return undefined;
  const group = heads / kvHeads;
  const kvUnits = batch * kvHeads;
  if (q.length !== batch * heads * queryLength * d || k.length !== kvUnits * keyLength * d)
    return undefined;
  const dv = (own(args, 'dv') as number | undefined) ?? v.length / (kvUnits * keyLength);
  if (!isCount(dv) || v.length !== kvUnits * keyLength * dv) return undefined;
  if (attentionFlops(batch * heads, queryLength, d, dv, mask, keyLength) < minFlops)
    return undefined;

  // Whole batches when there are several, else kv heads (with their query heads) of the one sequence.
  const byBatch = shape.length === 4 && batch > 1;
  if (bias !== undefined && !byBatch) return undefined;
  if (
    bias !== undefined &&
    bias !== 'alibi' &&
    !(typeof bias === 'object' && bias !== null && own(bias, 'values') === undefined)
  ) {
    return undefined;
  }
  const axis = byBatch ? 0 : shape.length - 3;
  const count = byBatch ? batch : kvHeads;
  // Per item of the split axis: query heads and kv heads.
  const [queryUnits, keyUnits] = byBatch ? [heads, kvHeads] : [group, 1];
  const n = Math.min(maxParts, count);
  if (n < 2) return undefined;

  const maskFor = maskSplitter(mask, { batch, heads, queryLength, keyLength, byBatch });
  if (!maskFor) return undefined;

  const parts = ranges(count, n).map(([start, end]) => {
    const [q0, q1] = [start * queryUnits * queryLength * d, end * queryUnits * queryLength * d];
    const [k0, k1] = [start * keyUnits * keyLength, end * keyUnits * keyLength];
    const partShape = [...shape];
    const partKvShape = [...kvShape];
    partShape[axis] = byBatch ? end - start : (end - start) * group;
    partKvShape[axis] = end - start;
    const slices = [q.slice(q0, q1), k.slice(k0 * d, k1 * d), v.slice(k0 * dv, k1 * dv)] as const;
    const [qPart, kPart, vPart] = slices;
    // The mask's head axis counts query heads.
    const [m0, m1] = byBatch ? [start, end] : [start * group, end * group];
    const partArgs: AttentionArgs = {
      ...args,
      q: qPart,
      k: kPart,
      v: vPart,
      shape: partShape,
      dv,
      mask: maskFor(m0, m1),
    };
    if (kvShapeArg !== undefined) partArgs.kvShape = partKvShape;
    return { args: partArgs, transfer: slices.map((t) => t.buffer) };
  });
  return { parts, axis };
}

interface Dims {
  batch: number;
  heads: number;
  queryLength: number;
  keyLength: number;
  byBatch: boolean;
}

/** A function giving each part its mask, or undefined when the mask keeps the call whole. */
function maskSplitter(
  mask: MaskSpec | undefined,
  dims: Dims,
): ((start: number, end: number) => MaskSpec | undefined) | undefined {
  if (mask === undefined || typeof mask === 'string') return () => mask;
  if (typeof mask !== 'object' || mask === null) return undefined;
  const { batch, heads, queryLength, keyLength, byBatch } = dims;
  const lengths = own(mask, 'lengths') as readonly number[] | undefined;
  if (lengths !== undefined && (!Array.isArray(lengths) || lengths.length !== batch))
    return undefined;

  const candidates = [
    [queryLength, keyLength],
    [batch, queryLength, keyLength],
    [batch, heads, queryLength, keyLength],
  ];
  const tensors: { data: 'additive' | 'allowed'; shape: 'additiveShape' | 'allowedShape' }[] = [
    { data: 'additive', shape: 'additiveShape' },
    { data: 'allowed', shape: 'allowedShape' },
  ];
  const slicers: ((start: number, end: number) => Partial<MaskObject>)[] = [];
  for (const field of tensors) {
    const given = own(mask, field.data);
    if (given === undefined) continue;
    // Typed masks as honest views; plain arrays as they are (the engine checks them).
    const data = (honestTypedArray(given) ?? given) as MaskTensor;
    const resolved = maskShape(data, own(mask, field.shape), candidates);
    const match = candidates.findIndex(
      (c) => resolved && c.length === resolved.length && c.every((x, i) => x === resolved[i]),
    );
    if (match < 0) return undefined; // broadcast or invalid: left to the engine
    const perBatch = product(resolved!.slice(1));
    const perHead = queryLength * keyLength;
    slicers.push((start, end) => {
      // (T, T) serves every part; (B, T, T) splits by batch only; (B, H, T, T) by either.
      if (match === 0 || (match === 1 && !byBatch))
        return { [field.data]: data, [field.shape]: resolved };
      const step = byBatch ? perBatch : perHead;
      const partShape = [...resolved!];
      partShape[byBatch ? 0 : 1] = end - start;
      return { [field.data]: data.slice(start * step, end * step), [field.shape]: partShape };
    });
  }
  return (start, end) => {
    const part: MaskObject = { ...mask };
    if (lengths !== undefined && byBatch) part.lengths = lengths.slice(start, end);
    for (const slice of slicers) Object.assign(part, slice(start, end));
    return part;
  };
}

/** Joins tensors along `axis`; their data are contiguous in that order. */
function concat<T extends { data: Float32Array | Uint8Array; shape: number[] }>(
  pieces: T[],
  axis: number,
): T {
  const first = pieces[0]!;
  const total = pieces.reduce((sum, p) => sum + p.data.length, 0);
  const data = new (first.data.constructor as new (n: number) => T['data'])(total);
  let offset = 0;
  for (const p of pieces) {
    data.set(p.data, offset);
    offset += p.data.length;
  }
  const shape = [...first.shape];
  shape[axis] = pieces.reduce((sum, p) => sum + p.shape[axis]!, 0);
  return { data, shape } as T;
}

/** The result of the whole call from the results of its parts, in order. */
export function mergeAttention(results: AttentionResult[], axis: number): AttentionResult {
  const merged: AttentionResult = {
    output: concat(
      results.map((r) => r.output),
      axis,
    ),
    fullyMasked: concat(
      results.map((r) => r.fullyMasked),
      axis,
    ),
    fullyMaskedCount: results.reduce((sum, r) => sum + r.fullyMaskedCount, 0),
  };
  // The log-sum-exp (logSumExp: true) has the output's leading axes.
  if (results.every((r) => r.logSumExp !== undefined))
    merged.logSumExp = concat(
      results.map((r) => r.logSumExp!),
      axis,
    );
  const traces = results.map((r) => r.trace);
  if (traces.every((t) => t !== undefined)) {
    // Every tensor of the trace (rotated q and k and the bias included) has the split axis at `axis`.
    const trace: Record<string, TensorOut> = {};
    for (const name of Object.keys(traces[0]!)) {
      trace[name] = concat(
        traces.map((t) => (t as unknown as Record<string, TensorOut>)[name]!),
        axis,
      );
    }
    merged.trace = trace as unknown as AttentionResult['trace'];
  }
  return merged;
}
