// Argument reading shared by the engine's methods: option objects, masks,
// variants and the weights of the layers, each checked and turned into call
// inputs (call.ts), with errors that name the argument (tensors.ts).
import type { RawTensor } from './attnscope.mjs';
import { inputBytes, type CallInputs, type CallOutputs } from './call.js';
import { keyShape, variantInputs, windowInputs, type VariantDims } from './attention-variants.js';
import {
  boolMaskTensor,
  fail,
  finiteNumber,
  formatShape,
  inputTensor,
  integerList,
  kMaxDimension,
  maskTensor,
  matrix,
  optionalVector,
  own,
  positiveInt,
  product,
  shapedTensor,
} from './tensors.js';
import type { Activation } from './types.js';

export const kTracedSquareTensors = 4;
export const kMaskFields = [
  'causal',
  'lengths',
  'additive',
  'additiveShape',
  'allowed',
  'allowedShape',
  'window',
  'sinks',
];
export const kGiB = 2 ** 30;

export function argsObject(fn: string, args: unknown): void {
  if (typeof args !== 'object' || args === null)
    fail(fn, `expects an object of named arguments, got ${String(args)}`);
}

export function activation(fn: string, value: unknown): Activation {
  if (value === undefined) return 'relu';
  if (value !== 'relu' && value !== 'gelu')
    fail(fn, `activation must be 'relu' or 'gelu', got ${String(value)}`);
  return value;
}

export function optionalBoolean(
  fn: string,
  name: string,
  value: unknown,
  fallback: boolean,
): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(fn, `${name} must be a boolean, got ${typeof value}`);
  return value;
}

/** Three decimals: near the limit, "4.00 GiB needed, 4.00 available" would say nothing. */
export function gib(bytes: number): string {
  return (bytes / kGiB).toFixed(3);
}

export type AttentionDims = VariantDims;

/** Dims of self-attention, where queries and keys are the same T positions. */
export function selfDims(
  batch: number,
  heads: number,
  kvHeads: number,
  length: number,
  headDim: number,
): AttentionDims {
  return { batch, heads, kvHeads, queryLength: length, keyLength: length, headDim };
}

export interface AttentionOptionInputs {
  inputs: CallInputs;
  trace: boolean;
  rope: boolean;
  bias: boolean;
}

/** Scale, mask, rope, bias and trace as named call inputs. */
export function attentionOptions(
  fn: string,
  args: object,
  dims: AttentionDims,
): AttentionOptionInputs {
  const { batch, heads, queryLength, keyLength } = dims;
  const trace = optionalBoolean(fn, 'trace', own(args, 'trace'), true);
  const inputs: CallInputs = {
    numbers: { trace, causal: false },
    texts: {},
    tensors: {},
    bytes: {},
    counts: {},
  };
  const scale = own(args, 'scale');
  if (scale === false) inputs.texts!.scaleMode = 'none';
  else if (typeof scale === 'number') {
    inputs.texts!.scaleMode = 'custom';
    inputs.numbers!.scaleFactor = finiteNumber(fn, 'scale', scale);
  } else if (scale !== undefined && scale !== true) {
    fail(fn, `scale must be a boolean or a number, got ${typeof scale}`);
  }

  const mask = own(args, 'mask');
  if (mask === 'causal') inputs.numbers!.causal = true;
  else if (typeof mask === 'object' && mask !== null) {
    // A misspelt field (say `casual`) would otherwise mask nothing, silently.
    for (const key of Object.keys(mask)) {
      if (!kMaskFields.includes(key))
        fail(fn, `mask has an unknown field '${key}' (expected ${kMaskFields.join(', ')})`);
    }
    inputs.numbers!.causal = optionalBoolean(fn, 'mask.causal', own(mask, 'causal'), false);
    const candidates = [
      [queryLength, keyLength],
      [batch, queryLength, keyLength],
      [batch, heads, queryLength, keyLength],
    ];
    const windows = windowInputs(fn, mask, keyLength);
    Object.assign(inputs.numbers!, windows.numbers);
    const lengths = own(mask, 'lengths');
    if (lengths !== undefined)
      inputs.counts!.lengths = integerList(fn, 'mask.lengths', lengths, kMaxDimension);
    const additive = own(mask, 'additive');
    if (additive !== undefined) {
      inputs.tensors!.additive = maskTensor(
        fn,
        'mask.additive',
        additive,
        own(mask, 'additiveShape'),
        candidates,
      );
    }
    const allowed = own(mask, 'allowed');
    if (allowed !== undefined) {
      inputs.bytes!.allowed = boolMaskTensor(
        fn,
        'mask.allowed',
        allowed,
        own(mask, 'allowedShape'),
        candidates,
      );
    }
  } else if (mask !== undefined && mask !== 'none') {
    fail(fn, `mask must be 'none', 'causal' or a mask object, got ${String(mask)}`);
  }
  const variants = variantInputs(fn, args, dims);
  return {
    inputs: merge(inputs, variants.inputs),
    trace,
    rope: variants.rope,
    bias: variants.bias,
  };
}

/** Merges named inputs; later groups add to earlier ones. */
export function merge(...groups: CallInputs[]): CallInputs {
  const out: Required<CallInputs> = { tensors: {}, bytes: {}, counts: {}, numbers: {}, texts: {} };
  for (const g of groups) {
    for (const key of Object.keys(out) as (keyof CallInputs)[]) Object.assign(out[key], g[key]);
  }
  return out;
}

export function withFlagShape<T extends { fullyMasked: unknown }>(
  raw: CallOutputs,
  shape: number[],
): T {
  return { ...raw, fullyMasked: { data: raw.fullyMasked, shape } } as unknown as T;
}

/** Projection weights and heads of selfAttention and transformerBlock, as named inputs. */
export function selfAttentionWeights(
  fn: string,
  p: object,
  channels: number,
  requireWo: boolean,
): { inputs: CallInputs; heads: number; kvHeads: number; width: number; valueWidth: number } {
  const headsArg = own(p, 'heads');
  const heads = headsArg === undefined && !requireWo ? 1 : positiveInt(fn, 'heads', headsArg);
  const kvHeadsArg = own(p, 'kvHeads');
  const kvHeads = kvHeadsArg === undefined ? heads : positiveInt(fn, 'kvHeads', kvHeadsArg);
  if (heads % kvHeads !== 0)
    fail(fn, `kvHeads is ${kvHeads}, which does not divide heads=${heads}: H % Hkv must be 0`);
  const wv = matrix(fn, 'wv', own(p, 'wv'), channels, 'C');
  const wq = matrix(fn, 'wq', own(p, 'wq'), channels, 'C');
  const tensors: Record<string, RawTensor | undefined> = {
    wq,
    wk: matrix(fn, 'wk', own(p, 'wk'), channels, 'C'),
    wv,
    bq: optionalVector(fn, 'bq', own(p, 'bq')),
    bk: optionalVector(fn, 'bk', own(p, 'bk')),
    bv: optionalVector(fn, 'bv', own(p, 'bv')),
  };
  const wvWidth = wv.shape[wv.shape.length - 1]!;
  if (wvWidth % kvHeads !== 0) {
    fail(
      fn,
      `wv has ${wvWidth} columns, not a multiple of kvHeads=${kvHeads} (wv is (C, Hkv*d_v))`,
    );
  }
  // The heads' outputs side by side: H·d_v columns, where wv has Hkv·d_v.
  const concatWidth = (wv.shape[wv.shape.length - 1]! / kvHeads) * heads;
  const wo = own(p, 'wo');
  if (wo !== undefined && wo !== null) tensors.wo = matrix(fn, 'wo', wo, concatWidth, 'H*d_v');
  else if (requireWo)
    fail(fn, 'attention.wo is required (the residual needs the output projected back to C)');
  tensors.bo = optionalVector(fn, 'bo', own(p, 'bo'));
  return {
    inputs: { tensors, numbers: { heads, kvHeads } },
    heads,
    kvHeads,
    width: wq.shape[wq.shape.length - 1]!,
    valueWidth: concatWidth,
  };
}

/**
 * Bytes selfAttention (and, with `hidden` > 0, transformerBlock) holds besides
 * the T×T trace: the core's copies of the inputs; Q, K, V and their per-head
 * copies (2·(2·w + w_v) floats a row); head outputs, concatenation and output
 * (2·w_v + C); and for the block the residuals, norms, feed-forward and output
 * (6·C + 2·hidden). Rounded up, so that a call refused late is rare.
 */
export function selfAttentionBytes(
  inputs: CallInputs,
  rows: number,
  weights: { width: number; valueWidth: number },
  channels: number,
  hidden: number,
): number {
  const { width, valueWidth } = weights;
  const perRow =
    4 * width + 4 * valueWidth + 2 * channels + (hidden > 0 ? 6 * channels + 2 * hidden : 0);
  return inputBytes(inputs) + rows * perRow * 4;
}

/** RMSNorm's epsilon: finite and > 0, default 1e-6. */
export function positiveEps(fn: string, value: unknown): number {
  if (value === undefined) return 1e-6;
  const eps = finiteNumber(fn, 'eps', value);
  if (!(eps > 0)) fail(fn, `eps must be > 0, got ${eps}`);
  return eps;
}

/** gate, up and down of a SwiGLU feed-forward as named inputs, with its widths. */
export function swigluWeights(
  fn: string,
  args: object,
  channels: number,
): { inputs: CallInputs; hidden: number; outputs: number } {
  const tensors: Record<string, RawTensor | undefined> = {};
  const widths: number[] = [];
  for (const [name, rows] of [
    ['gate', channels],
    ['up', channels],
    ['down', 0],
  ] as const) {
    const params = own(args, name);
    if (typeof params !== 'object' || params === null)
      fail(fn, `${name} is required ({ weight, bias? })`);
    const weight = matrix(
      fn,
      `${name}.weight`,
      own(params, 'weight'),
      rows || widths[0]!,
      rows ? 'C' : 'hidden',
    );
    tensors[`${name}Weight`] = weight;
    tensors[`${name}Bias`] = optionalVector(fn, `${name}.bias`, own(params, 'bias'));
    widths.push(weight.shape[weight.shape.length - 1]!);
  }
  return { inputs: { tensors }, hidden: widths[0]!, outputs: widths[2]! };
}

/** Sequence dimensions of x: (B, T, C) or (T, C). */
export function sequenceDims(x: RawTensor): {
  batch: number;
  length: number;
  channels: number;
  batched: boolean;
} {
  const batched = x.shape.length === 3;
  return {
    batch: batched ? x.shape[0]! : 1,
    length: x.shape[x.shape.length - 2]!,
    channels: x.shape[x.shape.length - 1]!,
    batched,
  };
}

export function checkColumns(
  fn: string,
  name: string,
  t: RawTensor,
  columns: number,
  label: string,
): void {
  if (t.shape[t.shape.length - 1] !== columns) {
    fail(fn, `${name} has shape ${formatShape(t.shape)}, expected ${label}=${columns} columns`);
  }
}

/** Creates the engine over an instantiated module. */
/** q, k and v of an attention-shaped call (attention, attentionBackward) with their dims. */
export function attentionTensors(
  fn: string,
  args: object,
): { q: RawTensor; k: RawTensor; v: RawTensor; dims: AttentionDims; lead: number[] } {
  const q = inputTensor(
    fn,
    'q',
    own(args, 'q'),
    own(args, 'shape'),
    [2, 3, 4],
    '[B, H, T, d], [H, T, d] or [T, d]',
  );
  const kShape = keyShape(fn, own(args, 'kvShape'), q.shape);
  const k = shapedTensor(fn, 'k', own(args, 'k'), kShape);
  const lead = q.shape.slice(0, -1);
  const kvLead = kShape.slice(0, -1);
  let v: RawTensor;
  const dv = own(args, 'dv');
  if (dv !== undefined) {
    v = shapedTensor(fn, 'v', own(args, 'v'), [...kvLead, positiveInt(fn, 'dv', dv)]);
  } else {
    const rows = product(kvLead);
    const m = matrix(
      fn,
      'v',
      own(args, 'v'),
      rows,
      own(args, 'kvShape') === undefined ? 'B*H*T' : 'B*Hkv*Tk',
    );
    v = m.shape.length === q.shape.length ? m : { data: m.data, shape: [...kvLead, m.shape[1]!] };
  }
  const rank = q.shape.length;
  const dims: AttentionDims = {
    batch: rank === 4 ? q.shape[0]! : 1,
    heads: rank >= 3 ? q.shape[rank - 3]! : 1,
    kvHeads: rank >= 3 ? kShape[rank - 3]! : 1,
    queryLength: q.shape[rank - 2]!,
    keyLength: kShape[rank - 2]!,
    headDim: q.shape[rank - 1]!,
  };
  return { q, k, v, dims, lead };
}

/**
 * The forward's output and logSumExp given to attentionBackward, as call inputs (none when
 * neither is given): both or neither, on the fast path, shaped as the forward returns them.
 */
export function savedForward(
  fn: string,
  args: object,
  lead: number[],
  outputShape: number[],
  trace: boolean,
): CallInputs {
  const output = own(args, 'output');
  const logSumExp = own(args, 'logSumExp');
  if (output === undefined && logSumExp === undefined) return {};
  if (output === undefined) fail(fn, 'logSumExp is given without output: pass both or neither');
  if (logSumExp === undefined) fail(fn, 'output is given without logSumExp: pass both or neither');
  if (trace) fail(fn, "output and logSumExp are the fast path's forward: pass trace: false");
  return {
    tensors: {
      output: shapedTensor(fn, 'output', output, outputShape),
      logSumExp: shapedTensor(fn, 'logSumExp', logSumExp, lead),
    },
    numbers: { savedForward: 1 },
  };
}
