// The typed engine over the raw module: refuses calls that cannot fit in
// wasm memory, runs the core through the call frame (call.ts) and adds the
// shapes the core leaves implicit. The arguments are read and checked by
// engine-args.ts, through their own properties only (own()), so a polluted
// Object.prototype changes nothing.
import type { AttnModule } from './attnscope.mjs';
import { callEngine, inputBytes, type CallInputs, type CallOutputs } from './call.js';
import { AttnScopeError, toAttnScopeError } from './errors.js';
import { loadModel } from './model.js';
import { createModel } from './model-create.js';
import type { LoadModelFromBlobOptions, LoadModelOptions, Model } from './model-types.js';
import { loadModelFromBlob } from './model-load-blob.js';
import type {
  AttentionBackwardArgs,
  AttentionBackwardResult,
  CreateModelArgs,
} from './train-types.js';
import { outputBuffer } from './output-buffer.js';
import {
  fail,
  finiteNumber,
  inputTensor,
  matrix,
  optionalVector,
  own,
  positiveInt,
  product,
  shapedTensor,
} from './tensors.js';
import type {
  AttentionArgs,
  AttentionResult,
  AttnScope,
  FeedForwardArgs,
  LayerNormArgs,
  LinearArgs,
  LlamaBlockArgs,
  LlamaBlockResult,
  MemoryUsage,
  PositionalEncodingArgs,
  ResidualAddArgs,
  RmsNormArgs,
  SelfAttentionArgs,
  SelfAttentionResult,
  SwigluArgs,
  TensorOut,
  TransformerBlockArgs,
  TransformerBlockResult,
} from './types.js';
import {
  type AttentionDims,
  type AttentionOptionInputs,
  kTracedSquareTensors,
  argsObject,
  activation,
  optionalBoolean,
  gib,
  selfDims,
  attentionOptions,
  merge,
  withFlagShape,
  selfAttentionWeights,
  selfAttentionBytes,
  positiveEps,
  swigluWeights,
  sequenceDims,
  checkColumns,
  attentionTensors,
  savedForward,
} from './engine-args.js';

export function createEngine(raw: AttnModule): AttnScope {
  const version = raw._version();
  const simdArch = raw._simd_arch();

  /**
   * Refuses, before anything is allocated, a call whose inputs plus `work`
   * bytes (its outputs, trace and intermediates) exceed what wasm memory can
   * still provide. The results are then copied to JS as well (`copies` bytes).
   */
  function requireMemory(
    fn: string,
    inputs: CallInputs,
    work: number,
    copies: number,
    what = 'the call',
  ): void {
    const needed = inputBytes(inputs) + work;
    const available = raw._memory_available();
    if (needed > available) {
      fail(
        fn,
        `${what} needs ${gib(needed)} GiB of WebAssembly memory (inputs, outputs and intermediates), more than ` +
          `WebAssembly's 4 GiB memory can still provide (${gib(available)} GiB); its copies returned to ` +
          `JavaScript would take ${gib(copies)} GiB more`,
      );
    }
  }

  /** Memory of an attention-shaped call: T×T tensors when traced, plus `linear` bytes. */
  function requireAttentionMemory(
    fn: string,
    inputs: CallInputs,
    dims: AttentionDims,
    options: AttentionOptionInputs,
    linear: number,
  ): void {
    const { batch, heads, kvHeads, queryLength, keyLength, headDim } = dims;
    const trace = options.trace;
    // The bias (ALiBi or given) is one more square tensor in the trace; the
    // fast path adds it tile by tile (a given bias is counted as an input).
    const squareCount = trace ? kTracedSquareTensors + (options.bias ? 1 : 0) : 0;
    const square = squareCount * batch * heads * queryLength * keyLength * 4;
    // Rope keeps rotated copies of q and k (and returns them when traced).
    const rotated = options.rope
      ? batch * (heads * queryLength + kvHeads * keyLength) * headDim * 4
      : 0;
    const work = square + rotated + linear;
    const copies = (trace ? square + rotated : 0) + linear;
    try {
      requireMemory(fn, inputs, work, copies);
    } catch (e) {
      if (!trace) throw e;
      const same = queryLength === keyLength;
      const lengths = same ? `T=${queryLength}` : `Tq=${queryLength}, Tk=${keyLength}`;
      const squareSize = same ? 'B·H·T·T' : 'B·H·Tq·Tk';
      // Say what fills the memory and how to avoid it.
      fail(
        fn,
        `a trace with B=${batch}, H=${heads}, ${lengths} ` +
          (e as Error).message.slice(`${fn}: the call `.length) +
          `; scores, scaled, masked and weights take ${squareSize} floats each (${gib(square)} GiB in all): ` +
          `pass trace: false for the fast path, which never materialises T×T`,
      );
    }
  }

  /** Runs a public method: any exception that is not already an AttnScopeError becomes one. */
  function guarded<A, R>(fn: string, body: (args: A) => R): (args: A) => R {
    return (args: A) => {
      try {
        return body(args);
      } catch (e) {
        throw toAttnScopeError(fn, e);
      }
    };
  }

  /**
   * A call built around self-attention (the attention alone or a block): its attention options,
   * the memory check of everything it allocates (`hidden`: the feed-forward's width per row beyond
   * the attention's), then the call itself.
   */
  function selfAttentionCall(
    fn: string,
    args: object,
    name: string,
    base: CallInputs,
    sequence: { batch: number; length: number; channels: number },
    weights: ReturnType<typeof selfAttentionWeights>,
    hidden: number,
  ): CallOutputs {
    const { batch, length, channels } = sequence;
    const headWidth = weights.width / weights.heads;
    const dims = selfDims(batch, weights.heads, weights.kvHeads, length, headWidth);
    const options = attentionOptions(fn, args, dims);
    const inputs = merge(base, weights.inputs, options.inputs);
    const linear = selfAttentionBytes(inputs, batch * length, weights, channels, hidden);
    requireAttentionMemory(fn, inputs, dims, options, linear);
    return callEngine(fn, raw, name, inputs);
  }

  function selfAttention(args: SelfAttentionArgs): SelfAttentionResult {
    const fn = 'selfAttention';
    argsObject(fn, args);
    const x = inputTensor(
      fn,
      'x',
      own(args, 'x'),
      own(args, 'shape'),
      [2, 3],
      '[B, T, C] or [T, C]',
    );
    const { batch, length, channels, batched } = sequenceDims(x);
    const weights = selfAttentionWeights(fn, args, channels, false);
    const sequence = { batch, length, channels };
    const result = selfAttentionCall(
      fn,
      args,
      'self_attention',
      { tensors: { x } },
      sequence,
      weights,
      0,
    );
    return withFlagShape(
      result,
      batched ? [batch, weights.heads, length] : [weights.heads, length],
    );
  }

  function attention(args: AttentionArgs): AttentionResult {
    const fn = 'attention';
    argsObject(fn, args);
    const { q, k, v, dims, lead } = attentionTensors(fn, args);
    const options = attentionOptions(fn, args, dims);
    const outputShape = [...lead, v.shape[v.shape.length - 1]!];
    const out = outputBuffer(fn, own(args, 'out'), outputShape);
    const logSumExp = optionalBoolean(fn, 'logSumExp', own(args, 'logSumExp'), false);
    if (logSumExp && options.trace)
      fail(fn, 'logSumExp comes from the fast path: pass trace: false');
    const inputs = merge({ tensors: { q, k, v }, numbers: { logSumExp } }, options.inputs);
    // The output, the flags and the log-sum-exp; the fast path's tiles are small.
    const flagsAndLse = product(lead) * (logSumExp ? 5 : 1);
    requireAttentionMemory(fn, inputs, dims, options, product(outputShape) * 4 + flagsAndLse);
    const result = withFlagShape<AttentionResult>(
      callEngine(fn, raw, 'attention', inputs, out),
      lead,
    );
    if (out) result.output.data = own(args, 'out') as Float32Array;
    return result;
  }

  function attentionBackward(args: AttentionBackwardArgs): AttentionBackwardResult {
    const fn = 'attentionBackward';
    argsObject(fn, args);
    if (own(args, 'out') !== undefined) fail(fn, 'out is not an argument of attentionBackward');
    const { q, k, v, dims, lead } = attentionTensors(fn, args);
    const options = attentionOptions(fn, args, dims);
    const outputShape = [...lead, v.shape[v.shape.length - 1]!];
    const dOutput = shapedTensor(fn, 'dOutput', own(args, 'dOutput'), outputShape);
    const saved = savedForward(fn, args, lead, outputShape, options.trace);
    const inputs = merge({ tensors: { q, k, v, dOutput } }, saved, options.inputs);
    // The forward's output and flags, then dq, dk and dv.
    const gradients = (q.data.length + k.data.length + v.data.length) * 4;
    requireAttentionMemory(fn, inputs, dims, options, dOutput.data.length * 4 + gradients);
    try {
      return callEngine(
        fn,
        raw,
        'attention_backward',
        inputs,
      ) as unknown as AttentionBackwardResult;
    } catch (e) {
      // The core names its C++ function and argument (attention_backward, d_output).
      if (e instanceof AttnScopeError && e.message.startsWith('attention_backward: '))
        fail(
          fn,
          e.message
            .slice('attention_backward: '.length)
            .replace(/\bd_output\b/g, 'dOutput')
            .replace(/\blog_sum_exp\b/g, 'logSumExp'),
        );
      throw e;
    }
  }

  /** A call with one output tensor of `outputFloats` floats; the core copies its inputs once. */
  function tensorCall(
    fn: string,
    name: string,
    inputs: CallInputs,
    outputFloats: number,
    out?: Float32Array,
  ): TensorOut {
    requireMemory(fn, inputs, inputBytes(inputs) + outputFloats * 4, outputFloats * 4);
    return callEngine(fn, raw, name, inputs, out).output as TensorOut;
  }

  function positionalEncoding(args: PositionalEncodingArgs): TensorOut {
    const fn = 'positionalEncoding';
    argsObject(fn, args);
    const length = positiveInt(fn, 'length', own(args, 'length'));
    const dim = positiveInt(fn, 'dim', own(args, 'dim'));
    const baseArg = own(args, 'base');
    const base = baseArg === undefined ? 10000 : finiteNumber(fn, 'base', baseArg);
    if (base <= 0) fail(fn, `base must be positive, got ${base}`);
    return tensorCall(fn, 'positional_encoding', { numbers: { length, dim, base } }, length * dim);
  }

  /** The tensor `name` of args (with args.shape) for the element-wise parts: any rank from 1 to 4. */
  function anyRankTensor(fn: string, args: object, name: string) {
    return inputTensor(
      fn,
      name,
      own(args, name),
      own(args, 'shape'),
      [1, 2, 3, 4],
      'a shape of rank 1 to 4',
    );
  }

  function linear(args: LinearArgs): TensorOut {
    const fn = 'linear';
    argsObject(fn, args);
    const x = anyRankTensor(fn, args, 'x');
    const inDim = x.shape[x.shape.length - 1]!;
    const weight = matrix(fn, 'weight', own(args, 'weight'), inDim, 'in');
    const outDim = own(args, 'outDim');
    if (outDim !== undefined)
      checkColumns(fn, 'weight', weight, positiveInt(fn, 'outDim', outDim), 'outDim');
    const bias = optionalVector(fn, 'bias', own(args, 'bias'));
    const shape = [...x.shape.slice(0, -1), weight.shape[1]!];
    const out = outputBuffer(fn, own(args, 'out'), shape);
    const result = tensorCall(fn, 'linear', { tensors: { x, weight, bias } }, product(shape), out);
    if (out) result.data = own(args, 'out') as Float32Array;
    return result;
  }

  function layerNorm(args: LayerNormArgs): TensorOut {
    const fn = 'layerNorm';
    argsObject(fn, args);
    const x = anyRankTensor(fn, args, 'x');
    const epsArg = own(args, 'eps');
    const eps = epsArg === undefined ? 1e-5 : finiteNumber(fn, 'eps', epsArg);
    const gamma = optionalVector(fn, 'gamma', own(args, 'gamma'));
    const beta = optionalVector(fn, 'beta', own(args, 'beta'));
    return tensorCall(
      fn,
      'layer_norm',
      { tensors: { x, gamma, beta }, numbers: { eps } },
      x.data.length,
    );
  }

  function feedForward(args: FeedForwardArgs): TensorOut {
    const fn = 'feedForward';
    argsObject(fn, args);
    const x = anyRankTensor(fn, args, 'x');
    const hidden = positiveInt(fn, 'hidden', own(args, 'hidden'));
    const w1 = matrix(fn, 'w1', own(args, 'w1'), x.shape[x.shape.length - 1]!, 'C');
    checkColumns(fn, 'w1', w1, hidden, 'hidden');
    const w2 = matrix(fn, 'w2', own(args, 'w2'), hidden, 'hidden');
    const b1 = optionalVector(fn, 'b1', own(args, 'b1'));
    const b2 = optionalVector(fn, 'b2', own(args, 'b2'));
    const act = activation(fn, own(args, 'activation'));
    const rows = x.data.length / x.shape[x.shape.length - 1]!;
    return tensorCall(
      fn,
      'feed_forward',
      { tensors: { x, w1, b1, w2, b2 }, texts: { activation: act } },
      rows * (hidden + w2.shape[1]!),
    );
  }

  function residualAdd(args: ResidualAddArgs): TensorOut {
    const fn = 'residualAdd';
    argsObject(fn, args);
    const a = anyRankTensor(fn, args, 'a');
    const b = shapedTensor(fn, 'b', own(args, 'b'), a.shape);
    return tensorCall(fn, 'residual_add', { tensors: { a, b } }, a.data.length);
  }

  /** A block's input x and its attention weights, checked the same way for both block kinds. */
  function blockInput(fn: string, args: object) {
    argsObject(fn, args);
    const x = inputTensor(
      fn,
      'x',
      own(args, 'x'),
      own(args, 'shape'),
      [2, 3],
      '[B, T, C] or [T, C]',
    );
    const { batch, length, channels, batched } = sequenceDims(x);
    const attentionArgs = own(args, 'attention');
    if (typeof attentionArgs !== 'object' || attentionArgs === null)
      fail(fn, 'attention weights are required');
    const weights = selfAttentionWeights(fn, attentionArgs, channels, true);
    return { x, batch, length, channels, batched, weights };
  }

  /** A block's result with the attention's fully-masked flags shaped like its input. */
  function blockResult(
    result: CallOutputs,
    batched: boolean,
    batch: number,
    heads: number,
    length: number,
  ) {
    const flagShape = batched ? [batch, heads, length] : [heads, length];
    return { ...result, attention: withFlagShape(result.attention as CallOutputs, flagShape) };
  }

  function transformerBlock(args: TransformerBlockArgs): TransformerBlockResult {
    const fn = 'transformerBlock';
    const { x, batch, length, channels, batched, weights } = blockInput(fn, args);
    const hidden = positiveInt(fn, 'hidden', own(args, 'hidden'));
    const ff1 = own(args, 'ff1');
    const ff2 = own(args, 'ff2');
    if (typeof ff1 !== 'object' || ff1 === null) fail(fn, 'ff1 is required');
    if (typeof ff2 !== 'object' || ff2 === null) fail(fn, 'ff2 is required');
    const ff1Weight = matrix(fn, 'ff1.weight', own(ff1, 'weight'), channels, 'C');
    checkColumns(fn, 'ff1.weight', ff1Weight, hidden, 'hidden');
    const ff2Weight = matrix(fn, 'ff2.weight', own(ff2, 'weight'), hidden, 'hidden');
    const norm1 = own(args, 'norm1');
    const norm2 = own(args, 'norm2');
    const epsArg = own(args, 'eps');
    const block: CallInputs = {
      tensors: {
        x,
        norm1Gamma: optionalVector(fn, 'norm1.gamma', own(norm1, 'gamma')),
        norm1Beta: optionalVector(fn, 'norm1.beta', own(norm1, 'beta')),
        norm2Gamma: optionalVector(fn, 'norm2.gamma', own(norm2, 'gamma')),
        norm2Beta: optionalVector(fn, 'norm2.beta', own(norm2, 'beta')),
        ff1Weight,
        ff1Bias: optionalVector(fn, 'ff1.bias', own(ff1, 'bias')),
        ff2Weight,
        ff2Bias: optionalVector(fn, 'ff2.bias', own(ff2, 'bias')),
      },
      texts: { activation: activation(fn, own(args, 'activation')) },
      numbers: {
        eps: epsArg === undefined ? 1e-5 : finiteNumber(fn, 'eps', epsArg),
        normFirst: optionalBoolean(fn, 'normFirst', own(args, 'normFirst'), false),
      },
    };
    const sequence = { batch, length, channels };
    const result = selfAttentionCall(
      fn,
      args,
      'transformer_block',
      block,
      sequence,
      weights,
      hidden,
    );
    return blockResult(
      result,
      batched,
      batch,
      weights.heads,
      length,
    ) as unknown as TransformerBlockResult;
  }

  function rmsNorm(args: RmsNormArgs): TensorOut {
    const fn = 'rmsNorm';
    argsObject(fn, args);
    const x = anyRankTensor(fn, args, 'x');
    const eps = positiveEps(fn, own(args, 'eps'));
    const gamma = optionalVector(fn, 'gamma', own(args, 'gamma'));
    return tensorCall(fn, 'rms_norm', { tensors: { x, gamma }, numbers: { eps } }, x.data.length);
  }

  function swiglu(args: SwigluArgs): TensorOut {
    const fn = 'swiglu';
    argsObject(fn, args);
    const x = anyRankTensor(fn, args, 'x');
    const channels = x.shape[x.shape.length - 1]!;
    const ffn = swigluWeights(fn, args, channels);
    const rows = x.data.length / channels;
    return tensorCall(
      fn,
      'swiglu',
      merge({ tensors: { x } }, ffn.inputs),
      rows * (3 * ffn.hidden + ffn.outputs),
    );
  }

  function llamaBlock(args: LlamaBlockArgs): LlamaBlockResult {
    const fn = 'llamaBlock';
    const { x, batch, length, channels, batched, weights } = blockInput(fn, args);
    const ffn = swigluWeights(fn, args, channels);
    const block: CallInputs = {
      tensors: {
        x,
        attentionNorm: optionalVector(fn, 'attentionNorm', own(args, 'attentionNorm')),
        ffnNorm: optionalVector(fn, 'ffnNorm', own(args, 'ffnNorm')),
      },
      numbers: { eps: positiveEps(fn, own(args, 'eps')) },
    };
    // Like transformerBlock's count, with SwiGLU's three hidden-wide rows.
    const base = merge(block, ffn.inputs);
    const sequence = { batch, length, channels };
    const result = selfAttentionCall(
      fn,
      args,
      'llama_block',
      base,
      sequence,
      weights,
      2 * ffn.hidden,
    );
    return blockResult(
      result,
      batched,
      batch,
      weights.heads,
      length,
    ) as unknown as LlamaBlockResult;
  }

  function memoryUsage(): MemoryUsage {
    return { heapInUse: raw._heap_in_use(), heapSize: raw._heap_size() };
  }

  function setMatmulTileRows(rows: 4 | 6 | 'auto'): void {
    if (rows !== 4 && rows !== 6 && rows !== 'auto') {
      throw new AttnScopeError(
        `setMatmulTileRows: rows must be 4, 6 or "auto", got ${typeof rows === 'string' ? JSON.stringify(rows) : String(rows)}`,
      );
    }
    const refused = raw._set_matmul_tile_rows(rows === 'auto' ? 0 : rows);
    if (refused) throw new AttnScopeError(`setMatmulTileRows: ${refused}`);
  }

  return {
    version,
    simdArch,
    threads: raw._thread_count(),
    get matmulTileRows() {
      return raw._matmul_tile_rows();
    },
    setMatmulTileRows: guarded('setMatmulTileRows', setMatmulTileRows),
    selfAttention: guarded('selfAttention', selfAttention),
    attention: guarded('attention', attention),
    attentionBackward: guarded('attentionBackward', attentionBackward),
    positionalEncoding: guarded('positionalEncoding', positionalEncoding),
    linear: guarded('linear', linear),
    layerNorm: guarded('layerNorm', layerNorm),
    feedForward: guarded('feedForward', feedForward),
    residualAdd: guarded('residualAdd', residualAdd),
    transformerBlock: guarded('transformerBlock', transformerBlock),
    rmsNorm: guarded('rmsNorm', rmsNorm),
    swiglu: guarded('swiglu', swiglu),
    llamaBlock: guarded('llamaBlock', llamaBlock),
    loadModel: (bytes: Uint8Array, options?: LoadModelOptions): Model => {
      try {
        return loadModel(raw, requireMemory, bytes, options);
      } catch (e) {
        throw toAttnScopeError('loadModel', e);
      }
    },
    loadModelFromBlob: async (blob: Blob, options?: LoadModelFromBlobOptions): Promise<Model> => {
      try {
        return await loadModelFromBlob(raw, requireMemory, blob, options);
      } catch (e) {
        throw toAttnScopeError('loadModelFromBlob', e);
      }
    },
    createModel: (args: CreateModelArgs): Model => {
      try {
        return createModel(raw, requireMemory, args);
      } catch (e) {
        throw toAttnScopeError('createModel', e);
      }
    },
    memoryUsage,
  };
}
