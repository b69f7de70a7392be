// The typed engine over the raw Embind module: validates and normalises
// arguments, calls the bound function, turns { ok: false } into an
// AttnScopeError and adds the shapes the core leaves implicit.
import type { AttnModule, RawOptions, RawResult, RawSelfAttentionWeights, RawTensor } from './attnscope.mjs';
import { AttnScopeError } from './errors.js';
import { outputBuffer } from './output-buffer.js';
import {
  boolMaskTensor,
  fail,
  finiteNumber,
  formatShape,
  inputTensor,
  maskTensor,
  matrix,
  optionalVector,
  positiveInt,
  shapedTensor,
} from './tensors.js';
import type {
  Activation,
  AttentionArgs,
  AttentionCommonOptions,
  AttentionResult,
  AttnScope,
  FeedForwardArgs,
  LayerNormArgs,
  LinearArgs,
  MemoryUsage,
  PositionalEncodingArgs,
  ResidualAddArgs,
  SelfAttentionArgs,
  SelfAttentionResult,
  TensorOut,
  TransformerBlockArgs,
  TransformerBlockResult,
} from './types.js';

/** WebAssembly memory is 32-bit: no request can use more than 4 GiB. */
const kWasmMemoryLimit = 2 ** 32;
/** The traced path keeps four T×T tensors per head: scores, scaled, masked, weights. */
const kTracedSquareTensors = 4;
const kMaskFields = ['causal', 'lengths', 'additive', 'additiveShape', 'allowed', 'allowedShape'];

type Raw<T> = Omit<T, 'fullyMasked'> & { fullyMasked: Uint8Array };

function unwrap<T>(result: RawResult<T>): T {
  if (result.ok) return result.value;
  throw new AttnScopeError(result.error);
}

function argsObject(fn: string, args: unknown): void {
  if (typeof args !== 'object' || args === null)
    fail(fn, `expects an object of named arguments, got ${String(args)}`);
}

function activation(fn: string, value: unknown): Activation {
  if (value === undefined) return 'relu';
  if (value !== 'relu' && value !== 'gelu')
    fail(fn, `activation must be 'relu' or 'gelu', got ${String(value)}`);
  return value;
}

function optionalBoolean(fn: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') fail(fn, `${name} must be a boolean, got ${typeof value}`);
  return value;
}

interface AttentionDims {
  batch: number;
  heads: number;
  length: number;
}

/** Scale, mask and trace in the form the bindings take. */
function rawOptions(fn: string, args: AttentionCommonOptions, dims: AttentionDims): RawOptions {
  const { batch, heads, length } = dims;
  const options: RawOptions = {
    scaleMode: 'inv_sqrt_dk',
    scaleFactor: 1,
    causal: false,
    trace: optionalBoolean(fn, 'trace', args.trace, true),
  };
  const scale = args.scale;
  if (scale === false) options.scaleMode = 'none';
  else if (typeof scale === 'number') {
    options.scaleMode = 'custom';
    options.scaleFactor = finiteNumber(fn, 'scale', scale);
  } else if (scale !== undefined && scale !== true) {
    fail(fn, `scale must be a boolean or a number, got ${typeof scale}`);
  }

  const mask = args.mask;
  if (mask === 'causal') options.causal = true;
  else if (typeof mask === 'object' && mask !== null) {
    // A misspelt field (say `casual`) would otherwise mask nothing, silently.
    for (const key of Object.keys(mask)) {
      if (!kMaskFields.includes(key))
        fail(fn, `mask has an unknown field '${key}' (expected ${kMaskFields.join(', ')})`);
    }
    options.causal = optionalBoolean(fn, 'mask.causal', mask.causal, false);
    const candidates = [
      [length, length],
      [batch, length, length],
      [batch, heads, length, length],
    ];
    if (mask.lengths !== undefined) {
      if (!Array.isArray(mask.lengths)) fail(fn, `mask.lengths must be an array of integers`);
      mask.lengths.forEach((n: unknown, i: number) => {
        if (typeof n !== 'number' || !Number.isInteger(n) || n < 0) {
          fail(fn, `mask.lengths[${i}] must be a non-negative integer, got ${String(n)}`);
        }
      });
      options.lengths = [...mask.lengths];
    }
    if (mask.additive !== undefined) {
      options.additive = maskTensor(fn, 'mask.additive', mask.additive, mask.additiveShape, candidates);
    }
    if (mask.allowed !== undefined) {
      options.allowed = boolMaskTensor(fn, 'mask.allowed', mask.allowed, mask.allowedShape, candidates);
    }
  } else if (mask !== undefined && mask !== 'none') {
    fail(fn, `mask must be 'none', 'causal' or a mask object, got ${String(mask)}`);
  }

  // Refuse a trace that cannot fit before anything is allocated.
  const squareBytes = batch * heads * length * length * Float32Array.BYTES_PER_ELEMENT;
  if (options.trace && squareBytes * kTracedSquareTensors > kWasmMemoryLimit) {
    const gib = ((squareBytes * kTracedSquareTensors) / 2 ** 30).toFixed(1);
    fail(
      fn,
      `a trace with B=${batch}, H=${heads}, T=${length} needs ${gib} GiB for scores, scaled, masked ` +
        `and weights (B·H·T·T floats each), more than WebAssembly's 4 GiB memory; pass trace: false ` +
        `for the fast path, which never materialises T×T`,
    );
  }
  return options;
}

function withFlagShape<T extends { fullyMasked: unknown }>(raw: Raw<T>, shape: number[]): T {
  return { ...raw, fullyMasked: { data: raw.fullyMasked, shape } } as unknown as T;
}

interface SelfAttentionParams {
  wq: unknown;
  wk: unknown;
  wv: unknown;
  bq?: unknown;
  bk?: unknown;
  bv?: unknown;
  wo?: unknown;
  bo?: unknown;
  heads?: unknown;
}

function selfAttentionWeights(
  fn: string,
  p: SelfAttentionParams,
  channels: number,
  requireWo: boolean,
): RawSelfAttentionWeights {
  const heads = p.heads === undefined && !requireWo ? 1 : positiveInt(fn, 'heads', p.heads);
  const wv = matrix(fn, 'wv', p.wv, channels, 'C');
  const weights: RawSelfAttentionWeights = {
    wq: matrix(fn, 'wq', p.wq, channels, 'C'),
    wk: matrix(fn, 'wk', p.wk, channels, 'C'),
    wv,
    heads,
  };
  const bq = optionalVector(fn, 'bq', p.bq);
  const bk = optionalVector(fn, 'bk', p.bk);
  const bv = optionalVector(fn, 'bv', p.bv);
  if (bq) weights.bq = bq;
  if (bk) weights.bk = bk;
  if (bv) weights.bv = bv;
  if (p.wo !== undefined && p.wo !== null) weights.wo = matrix(fn, 'wo', p.wo, wv.shape[1]!, 'H*d_v');
  else if (requireWo)
    fail(fn, 'attention.wo is required (the residual needs the output projected back to C)');
  const bo = optionalVector(fn, 'bo', p.bo);
  if (bo) weights.bo = bo;
  return weights;
}

/** Sequence dimensions of x: (B, T, C) or (T, C). */
function sequenceDims(x: RawTensor): { batch: number; length: number; channels: number; batched: boolean } {
  const batched = x.shape.length === 3;
  return {
    batch: batched ? x.shape[0]! : 1,
    length: x.shape[x.shape.length - 2]!,
    channels: x.shape[x.shape.length - 1]!,
    batched,
  };
}

function checkColumns(fn: string, name: string, t: RawTensor, columns: number, label: string): void {
  if (t.shape[t.shape.length - 1] !== columns) {
    fail(fn, `${name} has shape ${formatShape(t.shape)}, expected ${label}=${columns} columns`);
  }
}

/** Creates the engine over an instantiated module. */
export function createEngine(raw: AttnModule): AttnScope {
  const version = raw._version();
  const simdArch = raw._simd_arch();

  function selfAttention(args: SelfAttentionArgs): SelfAttentionResult {
    const fn = 'selfAttention';
    argsObject(fn, args);
    const x = inputTensor(fn, 'x', args.x, args.shape, [2, 3], '[B, T, C] or [T, C]');
    const { batch, length, channels, batched } = sequenceDims(x);
    const weights = selfAttentionWeights(fn, args, channels, false);
    const options = rawOptions(fn, args, { batch, heads: weights.heads, length });
    const result = unwrap(raw._self_attention(x, weights, options)) as Raw<SelfAttentionResult>;
    return withFlagShape(result, batched ? [batch, weights.heads, length] : [weights.heads, length]);
  }

  function attention(args: AttentionArgs): AttentionResult {
    const fn = 'attention';
    argsObject(fn, args);
    const q = inputTensor(fn, 'q', args.q, args.shape, [2, 3, 4], '[B, H, T, d], [H, T, d] or [T, d]');
    const k = shapedTensor(fn, 'k', args.k, q.shape);
    const lead = q.shape.slice(0, -1);
    let v: RawTensor;
    if (args.dv !== undefined) {
      v = shapedTensor(fn, 'v', args.v, [...lead, positiveInt(fn, 'dv', args.dv)]);
    } else {
      const rows = lead.reduce((a, b) => a * b, 1);
      const m = matrix(fn, 'v', args.v, rows, 'B*H*T');
      v = m.shape.length === q.shape.length ? m : { data: m.data, shape: [...lead, m.shape[1]!] };
    }
    const rank = q.shape.length;
    const dims = {
      batch: rank === 4 ? q.shape[0]! : 1,
      heads: rank >= 3 ? q.shape[rank - 3]! : 1,
      length: q.shape[rank - 2]!,
    };
    const options = rawOptions(fn, args, dims);
    const out = outputBuffer(fn, args.out, [...lead, v.shape[rank - 1]!]);
    if (out) options.out = out;
    const result = unwrap(raw._attention(q, k, v, options)) as Raw<AttentionResult>;
    return withFlagShape(result, lead);
  }

  function positionalEncoding(args: PositionalEncodingArgs): TensorOut {
    const fn = 'positionalEncoding';
    argsObject(fn, args);
    const length = positiveInt(fn, 'length', args.length);
    const dim = positiveInt(fn, 'dim', args.dim);
    const base = args.base === undefined ? 10000 : finiteNumber(fn, 'base', args.base);
    if (base <= 0) fail(fn, `base must be positive, got ${base}`);
    if (length * dim * Float32Array.BYTES_PER_ELEMENT > kWasmMemoryLimit) {
      fail(fn, `length·dim = ${length * dim} floats is more than WebAssembly's 4 GiB memory`);
    }
    return unwrap(raw._positional_encoding(length, dim, base));
  }

  function linear(args: LinearArgs): TensorOut {
    const fn = 'linear';
    argsObject(fn, args);
    const x = inputTensor(fn, 'x', args.x, args.shape, [1, 2, 3, 4], 'a shape of rank 1 to 4');
    const inDim = x.shape[x.shape.length - 1]!;
    const weight = matrix(fn, 'weight', args.weight, inDim, 'in');
    if (args.outDim !== undefined)
      checkColumns(fn, 'weight', weight, positiveInt(fn, 'outDim', args.outDim), 'outDim');
    const bias = optionalVector(fn, 'bias', args.bias);
    const out = outputBuffer(fn, args.out, [...x.shape.slice(0, -1), weight.shape[1]!]);
    return unwrap(raw._linear(x, bias ? { weight, bias } : { weight }, out));
  }

  function layerNorm(args: LayerNormArgs): TensorOut {
    const fn = 'layerNorm';
    argsObject(fn, args);
    const x = inputTensor(fn, 'x', args.x, args.shape, [1, 2, 3, 4], 'a shape of rank 1 to 4');
    const eps = args.eps === undefined ? 1e-5 : finiteNumber(fn, 'eps', args.eps);
    const gamma = optionalVector(fn, 'gamma', args.gamma);
    const beta = optionalVector(fn, 'beta', args.beta);
    return unwrap(raw._layer_norm(x, gamma, beta, eps));
  }

  function feedForward(args: FeedForwardArgs): TensorOut {
    const fn = 'feedForward';
    argsObject(fn, args);
    const x = inputTensor(fn, 'x', args.x, args.shape, [1, 2, 3, 4], 'a shape of rank 1 to 4');
    const hidden = positiveInt(fn, 'hidden', args.hidden);
    const w1 = matrix(fn, 'w1', args.w1, x.shape[x.shape.length - 1]!, 'C');
    checkColumns(fn, 'w1', w1, hidden, 'hidden');
    const w2 = matrix(fn, 'w2', args.w2, hidden, 'hidden');
    const b1 = optionalVector(fn, 'b1', args.b1);
    const b2 = optionalVector(fn, 'b2', args.b2);
    const act = activation(fn, args.activation);
    return unwrap(
      raw._feed_forward(
        x,
        b1 ? { weight: w1, bias: b1 } : { weight: w1 },
        b2 ? { weight: w2, bias: b2 } : { weight: w2 },
        act,
      ),
    );
  }

  function residualAdd(args: ResidualAddArgs): TensorOut {
    const fn = 'residualAdd';
    argsObject(fn, args);
    const a = inputTensor(fn, 'a', args.a, args.shape, [1, 2, 3, 4], 'a shape of rank 1 to 4');
    const b = shapedTensor(fn, 'b', args.b, a.shape);
    return unwrap(raw._residual_add(a, b));
  }

  function transformerBlock(args: TransformerBlockArgs): TransformerBlockResult {
    const fn = 'transformerBlock';
    argsObject(fn, args);
    const x = inputTensor(fn, 'x', args.x, args.shape, [2, 3], '[B, T, C] or [T, C]');
    const { batch, length, channels, batched } = sequenceDims(x);
    if (typeof args.attention !== 'object' || args.attention === null)
      fail(fn, 'attention weights are required');
    const attentionWeights = selfAttentionWeights(fn, args.attention, channels, true);
    const hidden = positiveInt(fn, 'hidden', args.hidden);
    if (typeof args.ff1 !== 'object' || args.ff1 === null) fail(fn, 'ff1 is required');
    if (typeof args.ff2 !== 'object' || args.ff2 === null) fail(fn, 'ff2 is required');
    const ff1Weight = matrix(fn, 'ff1.weight', args.ff1.weight, channels, 'C');
    checkColumns(fn, 'ff1.weight', ff1Weight, hidden, 'hidden');
    const ff2Weight = matrix(fn, 'ff2.weight', args.ff2.weight, hidden, 'hidden');
    const ff1Bias = optionalVector(fn, 'ff1.bias', args.ff1.bias);
    const ff2Bias = optionalVector(fn, 'ff2.bias', args.ff2.bias);
    const block = {
      attention: attentionWeights,
      norm1Gamma: optionalVector(fn, 'norm1.gamma', args.norm1?.gamma),
      norm1Beta: optionalVector(fn, 'norm1.beta', args.norm1?.beta),
      norm2Gamma: optionalVector(fn, 'norm2.gamma', args.norm2?.gamma),
      norm2Beta: optionalVector(fn, 'norm2.beta', args.norm2?.beta),
      ff1: ff1Bias ? { weight: ff1Weight, bias: ff1Bias } : { weight: ff1Weight },
      ff2: ff2Bias ? { weight: ff2Weight, bias: ff2Bias } : { weight: ff2Weight },
      activation: activation(fn, args.activation),
      eps: args.eps === undefined ? 1e-5 : finiteNumber(fn, 'eps', args.eps),
      normFirst: optionalBoolean(fn, 'normFirst', args.normFirst, false),
    };
    const options = rawOptions(fn, args, { batch, heads: attentionWeights.heads, length });
    const result = unwrap(raw._transformer_block(x, block, options)) as Omit<
      TransformerBlockResult,
      'attention'
    > & {
      attention: Raw<SelfAttentionResult>;
    };
    const flagShape = batched ? [batch, attentionWeights.heads, length] : [attentionWeights.heads, length];
    return { ...result, attention: withFlagShape(result.attention, flagShape) };
  }

  function memoryUsage(): MemoryUsage {
    return { heapInUse: raw._heap_in_use(), heapSize: raw._heap_size() };
  }

  return {
    version,
    simdArch,
    selfAttention,
    attention,
    positionalEncoding,
    linear,
    layerNorm,
    feedForward,
    residualAdd,
    transformerBlock,
    memoryUsage,
  };
}
