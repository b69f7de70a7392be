// Public types of the attnscope package. Every tensor is dense and row-major:
// the last index varies fastest.

import type { LoadModelFromBlobOptions, LoadModelOptions, Model } from './model-types.js';
import type {
  AttentionBackwardArgs,
  AttentionBackwardResult,
  CreateModelArgs,
} from './train-types.js';

/** Numbers nested to any depth, e.g. `number[][]` for a matrix. */
export type NestedNumbers = number | readonly NestedNumbers[];

/**
 * A tensor given to attnscope: a flat row-major `Float32Array` (its shape comes
 * from the `shape` argument or is implied by the other arguments), another
 * typed array or plain array of numbers, or nested arrays whose nesting gives
 * the shape (`[[1, 0], [0, 1]]` is 2×2).
 */
export type TensorInput =
  Float32Array | Float64Array | readonly number[] | readonly NestedNumbers[];

/** A tensor returned by attnscope: always a fresh copy, never a view into wasm memory. */
export interface TensorOut {
  /** Row-major values. */
  data: Float32Array;
  /** Dimensions, outermost first. */
  shape: number[];
}

/** One flag per query (1 = every key of that query was masked). */
export interface FlagsOut {
  /** 1 where the query's whole row was masked; its weights and output are then 0. */
  data: Uint8Array;
  /** `[B, H, T]` (without `B` when the input had no batch dimension). */
  shape: number[];
}

/**
 * Which keys each query may attend to. `'none'` (the default) masks nothing;
 * `'causal'` is the look-ahead mask (query i sees keys j ≤ i); an object
 * combines masks — a position masked by any of them is masked.
 */
export type MaskSpec =
  | 'none'
  | 'causal'
  | {
      /** Look-ahead mask: query i may only attend to keys j ≤ i. */
      causal?: boolean;
      /** Padding mask: one length per sequence of the batch; keys j ≥ lengths[b] are masked. */
      lengths?: readonly number[];
      /** Added to the scaled scores; `-Infinity` masks. Shape (T, T), (B, T, T) or (B, H, T, T). */
      additive?: TensorInput;
      /** Shape of a flat `additive`; inferred from its length (or nesting) when omitted. */
      additiveShape?: readonly number[];
      /** Boolean mask, true/1 = may attend (PyTorch's boolean attn_mask). Same shapes as `additive`. */
      allowed?:
        | Uint8Array
        | readonly (readonly boolean[])[]
        | readonly (readonly number[])[]
        | readonly boolean[]
        | readonly number[];
      /** Shape of a flat `allowed`; inferred from its length (or nesting) when omitted. */
      allowedShape?: readonly number[];
      /**
       * Sliding window, a positive integer W: key j is visible to query i only if
       * |pos(i) − j| < W, where pos(i) = Tk − Tq + i. Default: no window.
       */
      window?: number;
      /** Attention sinks: keys j < sinks stay visible through the window (still subject to causal); at most Tk. */
      sinks?: number;
    };

/** Rotary position embedding (RoPE, the Llama / GPT-NeoX rotate-half convention). */
export interface RopeSpec {
  /**
   * Base of the angles, finite and > 0; default 10000. Pairs (p, p + d/2) of q
   * at pos(i) and of k at j turn by pos·base^(−2p/d). d_k must be even.
   */
  base?: number;
}

/**
 * A bias added to the scaled scores, before the mask: `'alibi'` adds
 * −m_h·|pos(i) − j| (m_h = 2^(−8(h+1)/H) for H a power of two, the ALiBi
 * paper's rule otherwise); an object gives ALiBi and/or a general bias.
 */
export type BiasSpec =
  | 'alibi'
  | {
      /** Adds the ALiBi bias. */
      alibi?: boolean;
      /** A finite bias (H, Tq, Tk) shared by the batch, or (B, H, Tq, Tk); added after ALiBi. */
      values?: TensorInput;
      /** Shape of a flat `values`; inferred from its length (or nesting) when omitted. */
      shape?: readonly number[];
    };

/**
 * How scores are scaled before masking and softmax: `true` (default) divides
 * by √d_k, `false` leaves them as they are, a number multiplies them (a
 * temperature τ is `1 / τ`).
 */
export type ScaleSpec = boolean | number;

/** Options shared by the attention functions. */
export interface AttentionCommonOptions {
  /** Score scaling; default `true` (1/√d_k). */
  scale?: ScaleSpec;
  /** Mask; default `'none'`. */
  mask?: MaskSpec;
  /** Rotate q and k (RoPE) before the scores; default: no rotation. */
  rope?: RopeSpec;
  /** A bias on the scaled scores (ALiBi or given values); default: none. */
  bias?: BiasSpec;
  /**
   * `true` (default) keeps every intermediate (materialises T×T per head);
   * `false` takes the fast tiled online-softmax path and returns no trace.
   */
  trace?: boolean;
}

/** The query, key and value projections of multi-head attention, with optional biases. */
export interface ProjectionWeights {
  /** Query projection (C, H·d_k). */
  wq: TensorInput;
  /** Key projection (C, H·d_k). */
  wk: TensorInput;
  /** Value projection (C, H·d_v). */
  wv: TensorInput;
  /** Query bias (H·d_k). */
  bq?: TensorInput;
  /** Key bias (H·d_k). */
  bk?: TensorInput;
  /** Value bias (H·d_v). */
  bv?: TensorInput;
}

/** Arguments of {@link AttnScope.selfAttention}. */
export interface SelfAttentionArgs extends AttentionCommonOptions, ProjectionWeights {
  /** Input embeddings, (B, T, C) or (T, C). */
  x: TensorInput;
  /** Shape of `x`: `[B, T, C]` or `[T, C]`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Output projection (H·d_v, C_out), applied to the concatenated heads. */
  wo?: TensorInput;
  /** Output bias (C_out). */
  bo?: TensorInput;
  /** Number of heads H; default 1. Must divide the projection widths. */
  heads?: number;
  /**
   * Key/value heads Hkv (grouped-query attention; 1 is multi-query), a divisor of
   * `heads`; default `heads`. Then wk is (C, Hkv·d_k) and wv (C, Hkv·d_v), and
   * query head h reads kv head floor(h / (H / Hkv)).
   */
  kvHeads?: number;
}

/** Intermediates of {@link AttnScope.selfAttention} when `trace` is on. */
export interface SelfAttentionTrace {
  /** Queries per head (B, H, T, d_k). */
  q: TensorOut;
  /** Keys per kv head (B, Hkv, T, d_k). */
  k: TensorOut;
  /** Values per kv head (B, Hkv, T, d_v). */
  v: TensorOut;
  /** With `rope`: the queries after rotation, shaped as `q`. */
  qRotated?: TensorOut;
  /** With `rope`: the keys after rotation, shaped as `k`. */
  kRotated?: TensorOut;
  /** With `bias`: what was added to the scaled scores (B, H, T, T). */
  bias?: TensorOut;
  /** Q·Kᵀ (B, H, T, T); rows are queries, columns keys. */
  scores: TensorOut;
  /** scores · scale (B, H, T, T). */
  scaled: TensorOut;
  /** scaled + mask (B, H, T, T); masked entries are -Infinity. */
  masked: TensorOut;
  /** softmax over keys (B, H, T, T); masked weights are exactly 0. */
  weights: TensorOut;
  /** weights · V per head (B, H, T, d_v). */
  headOutputs: TensorOut;
  /** Heads side by side before W_O (B, T, H·d_v). */
  concat: TensorOut;
}

/** Result of {@link AttnScope.selfAttention}. Shapes drop the leading B when the input had none. */
export interface SelfAttentionResult {
  /** (B, T, C_out) with W_O, else (B, T, H·d_v). */
  output: TensorOut;
  /** Queries whose every key was masked, (B, H, T). */
  fullyMasked: FlagsOut;
  /** Number of 1s in `fullyMasked`. */
  fullyMaskedCount: number;
  /** Present when `trace` was on. */
  trace?: SelfAttentionTrace;
}

/** Arguments of {@link AttnScope.attention}. */
export interface AttentionArgs extends AttentionCommonOptions {
  /** Queries (B, H, Tq, d_k), (H, Tq, d_k) or (Tq, d_k). */
  q: TensorInput;
  /** Keys, of shape `kvShape` (default: the shape of `q`). */
  k: TensorInput;
  /** Values, the shape of `k` with last dimension `dv`. */
  v: TensorInput;
  /** Shape of `q`: `[B, H, Tq, d]`, `[H, Tq, d]` or `[Tq, d]`. Optional when `q` is nested. */
  shape?: readonly number[];
  /**
   * Shape of `k`, of the rank of `shape`: `[B, Hkv, Tk, d]`, `[Hkv, Tk, d]` or
   * `[Tk, d]`; default: `shape`. Grouped keys and values (GQA; MQA when Hkv = 1):
   * H % Hkv = 0 and query head h reads kv head floor(h / (H / Hkv)). A KV cache:
   * Tq ≤ Tk, query i sits at position Tk − Tq + i (causal is aligned to the last key).
   */
  kvShape?: readonly number[];
  /** Last dimension of `v`; default: inferred from its length (usually `d`). */
  dv?: number;
  /**
   * Where to write the output instead of a new array: a Float32Array of exactly
   * the output's size (B·H·T·d_v), returned as `output.data`. Reusing one across
   * calls spares allocating (and, for large outputs, faulting in) a fresh array
   * each time. It may be one of the inputs (unless that input's buffer is moved to
   * a worker with `transfer`). Left untouched when the call fails.
   */
  out?: Float32Array;
  /**
   * Also return each query's log-sum-exp of its masked scores (`logSumExp`); needs
   * `trace: false`. With it the output and the log-sum-exp are what
   * {@link AttnScope.attentionBackward} can start from. It always runs the tiled
   * kernel, also for a few query rows where the fast path would take its decode
   * kernel, so there the output may differ from a call without it in the last bits.
   */
  logSumExp?: boolean;
}

/** Intermediates of {@link AttnScope.attention} when `trace` is on; the square ones are (B, H, Tq, Tk). */
export interface AttentionTrace {
  /** With `rope`: the queries after rotation, shaped as `q`. */
  qRotated?: TensorOut;
  /** With `rope`: the keys after rotation, shaped as `k`. */
  kRotated?: TensorOut;
  /** With `bias`: what was added to the scaled scores. */
  bias?: TensorOut;
  /** Q·Kᵀ (of the rotated q and k with `rope`). */
  scores: TensorOut;
  /** scores · scale. */
  scaled: TensorOut;
  /** scaled + bias + mask; masked entries are -Infinity. */
  masked: TensorOut;
  /** softmax over keys; masked weights are exactly 0. */
  weights: TensorOut;
}

/** Result of {@link AttnScope.attention}; shapes have the rank of the input. */
export interface AttentionResult {
  /** weights · V, the shape of `q` with last dimension d_v. */
  output: TensorOut;
  /** Queries whose every key was masked: the shape of `q` without its last dimension. */
  fullyMasked: FlagsOut;
  /** Number of 1s in `fullyMasked`. */
  fullyMaskedCount: number;
  /** Present when `trace` was on. */
  trace?: AttentionTrace;
  /**
   * With `logSumExp: true`: each query's log-sum-exp of its masked scores, the shape of
   * `q` without its last dimension; -Infinity for a fully masked query.
   */
  logSumExp?: TensorOut;
}

/** Arguments of {@link AttnScope.positionalEncoding}. */
export interface PositionalEncodingArgs {
  /** Sequence length T. */
  length: number;
  /** Model dimension C. */
  dim: number;
  /** Base of the wavelengths; default 10000. */
  base?: number;
}

/** Arguments of {@link AttnScope.linear}: y = x·W (+ b). */
export interface LinearArgs {
  /** Input (..., in). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Weight (in, outDim). */
  weight: TensorInput;
  /** Bias (outDim). */
  bias?: TensorInput;
  /** Output width; default: inferred from `weight`. */
  outDim?: number;
  /**
   * Where to write the output instead of a new array: a Float32Array of exactly
   * the output's size (the rows of `x` times outDim), returned as `data`. As for
   * {@link AttentionArgs.out}: it spares a fresh array (and, for large outputs,
   * its page faults) per call, may be one of the inputs, and is left untouched
   * when the call fails.
   */
  out?: Float32Array;
}

/** Arguments of {@link AttnScope.layerNorm} over the last dimension. */
export interface LayerNormArgs {
  /** Input (..., C). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Scale (C); default all 1. */
  gamma?: TensorInput;
  /** Shift (C); default all 0. */
  beta?: TensorInput;
  /** Added to the (biased) variance; default 1e-5. */
  eps?: number;
}

/** Activation of the feed-forward layer; GELU is the exact x·Φ(x). */
export type Activation = 'relu' | 'gelu';

/** Arguments of {@link AttnScope.feedForward}: Linear → activation → Linear. */
export interface FeedForwardArgs {
  /** Input (..., C). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** First weight (C, hidden). */
  w1: TensorInput;
  /** First bias (hidden). */
  b1?: TensorInput;
  /** Second weight (hidden, C_out). */
  w2: TensorInput;
  /** Second bias (C_out). */
  b2?: TensorInput;
  /** Hidden width. */
  hidden: number;
  /** Default `'relu'`. */
  activation?: Activation;
}

/** Arguments of {@link AttnScope.residualAdd}: a + b element-wise. */
export interface ResidualAddArgs {
  /** First operand. */
  a: TensorInput;
  /** Second operand, same shape. */
  b: TensorInput;
  /** Shape of both. Optional when `a` is nested. */
  shape?: readonly number[];
}

/** LayerNorm parameters of a transformer block. */
export interface NormParams {
  /** Scale (C); default all 1. */
  gamma?: TensorInput;
  /** Shift (C); default all 0. */
  beta?: TensorInput;
}

/** A linear layer of the block's feed-forward part. */
export interface LinearParams {
  /** Weight (in, out). */
  weight: TensorInput;
  /** Bias (out). */
  bias?: TensorInput;
}

/** Attention weights of a transformer block; `wo` is required so the residual matches C. */
export interface BlockAttentionParams extends ProjectionWeights {
  /** Output projection (H·d_v, C). */
  wo: TensorInput;
  /** Output bias (C). */
  bo?: TensorInput;
  /** Number of heads H. */
  heads: number;
  /** Key/value heads Hkv, a divisor of `heads`; default `heads` (see {@link SelfAttentionArgs.kvHeads}). */
  kvHeads?: number;
}

/** Arguments of {@link AttnScope.transformerBlock}. */
export interface TransformerBlockArgs extends AttentionCommonOptions {
  /** Input (B, T, C) or (T, C). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Multi-head attention weights. */
  attention: BlockAttentionParams;
  /** LayerNorm around attention. */
  norm1?: NormParams;
  /** LayerNorm around the feed-forward part. */
  norm2?: NormParams;
  /** First feed-forward layer (C, hidden). */
  ff1: LinearParams;
  /** Second feed-forward layer (hidden, C). */
  ff2: LinearParams;
  /** Hidden width of the feed-forward part. */
  hidden: number;
  /** Default `'relu'`. */
  activation?: Activation;
  /** LayerNorm epsilon; default 1e-5. */
  eps?: number;
  /** `true`: pre-norm (x + Attn(LN(x))); `false` (default): post-norm (LN(x + Attn(x))). */
  normFirst?: boolean;
}

/** Result of {@link AttnScope.transformerBlock}: the output and every stage. */
export interface TransformerBlockResult {
  /** Block output, the shape of `x`. */
  output: TensorOut;
  /** The attention sub-layer, with its trace when `trace` was on. */
  attention: SelfAttentionResult;
  /** x + attention output (before the norm in post-norm). */
  attentionResidual: TensorOut;
  /** First LayerNorm's output. */
  norm1: TensorOut;
  /** activation(first linear). */
  ffHidden: TensorOut;
  /** Second linear. */
  ffOutput: TensorOut;
  /** h + ffOutput. */
  ffResidual: TensorOut;
  /** Second LayerNorm's output. */
  norm2: TensorOut;
}

/** Arguments of {@link AttnScope.rmsNorm} over the last dimension. */
export interface RmsNormArgs {
  /** Input (..., C). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Scale (C); default all 1. */
  gamma?: TensorInput;
  /** Added to the mean of squares; finite and > 0; default 1e-6. */
  eps?: number;
}

/** Arguments of {@link AttnScope.swiglu}: (SiLU(x·W_gate) ⊙ (x·W_up))·W_down. */
export interface SwigluArgs {
  /** Input (..., C). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Gate projection (C, hidden), optional bias (hidden). */
  gate: LinearParams;
  /** Up projection (C, hidden), optional bias (hidden). */
  up: LinearParams;
  /** Down projection (hidden, C_out), optional bias (C_out). */
  down: LinearParams;
}

/** Arguments of {@link AttnScope.llamaBlock}: h = x + Attn(RMSNorm(x)); out = h + SwiGLU(RMSNorm(h)). */
export interface LlamaBlockArgs extends AttentionCommonOptions {
  /** Input (B, T, C) or (T, C). */
  x: TensorInput;
  /** Shape of `x`. Optional when `x` is nested. */
  shape?: readonly number[];
  /** Attention weights (Llama has no biases, but they are accepted); `kvHeads` for grouped kv heads. */
  attention: BlockAttentionParams;
  /** RMSNorm gamma (C) before attention; default all 1. */
  attentionNorm?: TensorInput;
  /** RMSNorm gamma (C) before the feed-forward; default all 1. */
  ffnNorm?: TensorInput;
  /** SwiGLU gate projection (C, hidden). */
  gate: LinearParams;
  /** SwiGLU up projection (C, hidden). */
  up: LinearParams;
  /** SwiGLU down projection (hidden, C). */
  down: LinearParams;
  /** RMSNorm epsilon; default 1e-6. */
  eps?: number;
}

/** Result of {@link AttnScope.llamaBlock}: the output and every stage. */
export interface LlamaBlockResult {
  /** Block output, the shape of `x`. */
  output: TensorOut;
  /** RMSNorm(x). */
  attentionNorm: TensorOut;
  /** The attention sub-layer on RMSNorm(x), with its trace when `trace` was on. */
  attention: SelfAttentionResult;
  /** h = x + attention output. */
  attentionResidual: TensorOut;
  /** RMSNorm(h). */
  ffnNorm: TensorOut;
  /** SwiGLU(RMSNorm(h)). */
  ffnOutput: TensorOut;
}

/** Bytes of wasm memory, for checking that calls leave nothing behind. */
export interface MemoryUsage {
  /** Bytes currently allocated by the module's malloc. */
  heapInUse: number;
  /** Size of the WebAssembly memory in bytes (it grows, never shrinks). */
  heapSize: number;
}

/** The attention engine: one loaded instance of the WebAssembly module. */
export interface AttnScope {
  /** Version of the C++ core, "MAJOR.MINOR.PATCH". */
  readonly version: string;
  /** SIMD instruction set the kernels were compiled for (under WebAssembly: "sse2", mapped onto 128-bit wasm SIMD; "sse2+relaxed_madd" in the relaxed-SIMD build). */
  readonly simdArch: string;
  /** Threads the engine computes on: 1 for the single-thread builds, else the threaded build's count. */
  readonly threads: number;
  /**
   * Rows of the result the products with weight matrices (projections, a GPT-2's blocks and LM
   * head) and attention's fast path compute at a time: 4 or 6. Both give the same bits; which is
   * faster depends on the WebAssembly engine, so the first model loaded or created with dModel ≥ 512,
   * or the first fast-path attention call of at least 2^26 multiply-adds (8 heads at T = 256, d =
   * 64), times both on a GPT-2 block's product and keeps the faster (unless setMatmulTileRows came
   * first). 4 until then.
   */
  readonly matmulTileRows: number;
  /** Sets matmulTileRows (4 or 6), or "auto" to measure now: for benchmarks. */
  setMatmulTileRows(rows: 4 | 6 | 'auto'): void;
  /** Multi-head self-attention: project, split heads, attend, concatenate, optionally W_O. */
  selfAttention(args: SelfAttentionArgs): SelfAttentionResult;
  /** Scaled dot-product attention on given queries, keys and values. */
  attention(args: AttentionArgs): AttentionResult;
  /** Sinusoidal positional encoding (T, C) of "Attention Is All You Need". */
  positionalEncoding(args: PositionalEncodingArgs): TensorOut;
  /** y = x·W (+ b). */
  linear(args: LinearArgs): TensorOut;
  /** LayerNorm over the last dimension (biased variance, as in PyTorch). */
  layerNorm(args: LayerNormArgs): TensorOut;
  /** Linear → ReLU/GELU → Linear. */
  feedForward(args: FeedForwardArgs): TensorOut;
  /** a + b element-wise. */
  residualAdd(args: ResidualAddArgs): TensorOut;
  /** A full transformer block (attention, residuals, LayerNorms, feed-forward) with every stage. */
  transformerBlock(args: TransformerBlockArgs): TransformerBlockResult;
  /** RMSNorm over the last dimension: x / √(mean(x²) + eps) · gamma. */
  rmsNorm(args: RmsNormArgs): TensorOut;
  /** The SwiGLU feed-forward of Llama: (SiLU(x·W_gate) ⊙ (x·W_up))·W_down. */
  swiglu(args: SwigluArgs): TensorOut;
  /** A Llama-style decoder block (pre-RMSNorm, attention, SwiGLU, residuals) with every stage. */
  llamaBlock(args: LlamaBlockArgs): LlamaBlockResult;
  /**
   * A GPT-2 from a .safetensors file (float32, float16 or bfloat16 tensors by
   * their Hugging Face names, with or without the "transformer." prefix),
   * living in wasm memory until model.dispose().
   */
  loadModel(bytes: Uint8Array, options?: LoadModelOptions): Model;
  /**
   * loadModel reading the file from a Blob (a File, or Node's fs.openAsBlob),
   * a piece at a time straight into wasm memory: the file is never held
   * whole, so loading needs about the model's size, not twice it.
   */
  loadModelFromBlob(blob: Blob, options?: LoadModelFromBlobOptions): Promise<Model>;
  /** Gradients of attention() with respect to q, k and v, given dLoss/dOutput (traced or flash-style). */
  attentionBackward(args: AttentionBackwardArgs): AttentionBackwardResult;
  /** A new GPT-2 with GPT-2's initialisation from a seed, the same Model that loadModel returns. */
  createModel(args: CreateModelArgs): Model;
  /** Current wasm memory use. */
  memoryUsage(): MemoryUsage;
}

/**
 * Which build of the module to load. Both compute the same attention with the
 * same API; "relaxed" uses relaxed SIMD's fused multiply-add (f32x4.relaxed_madd)
 * in its kernels, which is faster where the CPU has FMA, and needs an engine
 * with relaxed SIMD (Chromium 114+, Firefox 145+, Node 22+, or Node 20 with
 * --experimental-wasm-relaxed-simd). "auto" (the default) picks "relaxed" when
 * the engine validates it, "simd128" otherwise.
 */
export type SimdFlavour = 'auto' | 'simd128' | 'relaxed';

/** How to find the WebAssembly binary. By default it is `attnscope-relaxed.wasm` or `attnscope.wasm` next to the loader. */
export interface CreateOptions {
  /** Where to fetch (browser) or read (Node: a file URL, path, or http(s) URL) the wasm from. */
  wasmUrl?: string | URL;
  /**
   * Emscripten-style resolver: gets the chosen file's name ("attnscope.wasm", "attnscope-relaxed.wasm",
   * or a threaded build's: "attnscope-threads.wasm", "attnscope-threads-relaxed.wasm", their glue
   * ".mjs" and "attnscope-threads.worker.js") and the loader's directory, returns a URL.
   */
  locateFile?: (path: string, scriptDirectory: string) => string;
  /** The wasm bytes themselves; nothing is fetched. */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Which build to load when neither wasmUrl nor wasmBinary names one; default "auto". */
  simd?: SimdFlavour;
  /**
   * Threads to compute on (an integer 1 to 256), or "auto" (the default): every
   * hardware thread (at most 8), through the threaded build of the `simd` flavour, where it can
   * run (Node, or a cross-origin isolated page: `crossOriginIsolated`), else 1. 1 loads a
   * single-thread build; more than 1 where the threaded build cannot run is an
   * AttnScopeError. With wasmUrl or wasmBinary, "auto" means 1, and more than 1 needs the
   * threaded bytes, with simd "relaxed" for the relaxed threaded build's (the bytes cannot tell
   * which glue they need).
   */
  threads?: number | 'auto';
}
