// The message protocol between an engine running in a worker and its proxy on
// the calling side. Environment-neutral: browser module workers and Node's
// worker_threads both plug in through the small Port interfaces.
import { AttnScopeError } from './errors.js';
import type { LoadModelFromBlobOptions, LoadModelOptions } from './model-types.js';
import type { CreateModelArgs } from './train-types.js';
import { keepingAttentionOutput, keepingLinearOutput } from './output-buffer.js';
import {
  kModelMethods,
  modelHost,
  workerModel,
  type ModelMethod,
  type WorkerModel,
} from './worker-models.js';
import type {
  AttentionArgs,
  AttentionResult,
  AttnScope,
  CreateOptions,
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
  SimdFlavour,
  SwigluArgs,
  TensorOut,
  TransformerBlockArgs,
  TransformerBlockResult,
} from './types.js';

/** Options of {@link createAttnScopeWorker}. Functions cannot reach a worker, so there is no `locateFile`. */
export interface WorkerCreateOptions {
  /** Absolute URL (browser) or file URL/path (Node) of attnscope.wasm; default: next to the loader. */
  wasmUrl?: string | URL;
  /** The wasm bytes themselves (copied to the worker). */
  wasmBinary?: ArrayBuffer | Uint8Array;
  /** Which build to load when neither wasmUrl nor wasmBinary names one (see CreateOptions.simd). */
  simd?: SimdFlavour;
  /** Threads of the worker's engine (see CreateOptions.threads); default "auto". */
  threads?: number | 'auto';
}

/** What a worker reports once its engine is loaded. */
export interface WorkerInfo {
  /** Version of the C++ core. */
  version: string;
  /** SIMD instruction set of the kernels. */
  simdArch: string;
  /** Threads the engine computes on (1: a single-thread build). */
  threads: number;
}

/**
 * The engine in a worker: the same methods as {@link AttnScope}, each returning
 * a Promise. Arguments are copied to the worker unless their buffers are listed
 * in a method's optional `transfer` argument: those move instead, and are
 * detached (empty) on the calling side afterwards. Result buffers are moved to
 * the caller, not copied.
 */
export interface AttnScopeWorker {
  /** Resolves once the wasm is loaded in the worker; rejects with AttnScopeError if it cannot load. */
  readonly ready: Promise<WorkerInfo>;
  /** Version of the C++ core. */
  readonly version: Promise<string>;
  /** SIMD instruction set of the kernels. */
  readonly simdArch: Promise<string>;
  /** See {@link AttnScope.selfAttention}. */
  selfAttention(args: SelfAttentionArgs, transfer?: ArrayBuffer[]): Promise<SelfAttentionResult>;
  /** See {@link AttnScope.attention}. */
  attention(args: AttentionArgs, transfer?: ArrayBuffer[]): Promise<AttentionResult>;
  /** See {@link AttnScope.positionalEncoding}. */
  positionalEncoding(args: PositionalEncodingArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.linear}. */
  linear(args: LinearArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.layerNorm}. */
  layerNorm(args: LayerNormArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.feedForward}. */
  feedForward(args: FeedForwardArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.residualAdd}. */
  residualAdd(args: ResidualAddArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.transformerBlock}. */
  transformerBlock(
    args: TransformerBlockArgs,
    transfer?: ArrayBuffer[],
  ): Promise<TransformerBlockResult>;
  /** See {@link AttnScope.rmsNorm}. */
  rmsNorm(args: RmsNormArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.swiglu}. */
  swiglu(args: SwigluArgs, transfer?: ArrayBuffer[]): Promise<TensorOut>;
  /** See {@link AttnScope.llamaBlock}. */
  llamaBlock(args: LlamaBlockArgs, transfer?: ArrayBuffer[]): Promise<LlamaBlockResult>;
  /**
   * See {@link AttnScope.loadModel}: the model lives in the worker. List
   * `bytes.buffer` in `transfer` to move the file instead of copying it.
   */
  loadModel(
    bytes: Uint8Array,
    options?: LoadModelOptions,
    transfer?: ArrayBuffer[],
  ): Promise<WorkerModel>;
  /**
   * See {@link AttnScope.loadModelFromBlob}: the worker reads the Blob (a
   * File crosses to it without a copy of its bytes); `onProgress` cannot
   * cross, so there is none.
   */
  loadModelFromBlob(
    blob: Blob,
    options?: Omit<LoadModelFromBlobOptions, 'onProgress'>,
  ): Promise<WorkerModel>;
  /** See {@link AttnScope.createModel}: the model (and any trainer of it) lives in the worker. */
  createModel(args: CreateModelArgs): Promise<WorkerModel>;
  /** See {@link AttnScope.memoryUsage}. */
  memoryUsage(): Promise<MemoryUsage>;
  /** Stops the worker; pending calls reject with AttnScopeError. */
  terminate(): void;
}

const kMethods = [
  'selfAttention',
  'attention',
  'positionalEncoding',
  'linear',
  'layerNorm',
  'feedForward',
  'residualAdd',
  'transformerBlock',
  'rmsNorm',
  'swiglu',
  'llamaBlock',
  'memoryUsage',
] as const;
type Method = (typeof kMethods)[number] | ModelMethod;
const kAllMethods: readonly string[] = [...kMethods, ...kModelMethods];

type InitOptions = {
  wasmUrl?: string;
  wasmBinary?: ArrayBuffer | Uint8Array;
  simd?: SimdFlavour;
  threads?: number | 'auto';
};
type ToWorker =
  | { type: 'init'; options: InitOptions }
  | { type: 'call'; id: number; method: Method; args: unknown };
type FromWorker =
  | { type: 'ready'; version: string; simdArch: string; threads: number }
  | { type: 'init-error'; message: string }
  | { type: 'result'; id: number; ok: true; value: unknown }
  | { type: 'result'; id: number; ok: false; name: string; message: string };

/** The calling side's end of the channel. */
export interface ClientPort {
  /** Sends a message to the worker (structured clone), moving the listed buffers. */
  post(message: unknown, transfer: ArrayBuffer[]): void;
  /** Registers the handlers for the worker's messages and for its failure. */
  listen(onMessage: (data: unknown) => void, onFailure: (error: Error) => void): void;
  /** Stops the worker. */
  terminate(): void;
}

/** The worker's end of the channel. */
export interface ServerPort {
  /** Sends a message to the caller, moving the listed buffers. */
  post(message: unknown, transfer: ArrayBuffer[]): void;
  /** Registers the handler for the caller's messages. */
  listen(onMessage: (data: unknown) => void): void;
}

/** Every ArrayBuffer of a result, so they move to the caller instead of being copied. */
function buffersOf(value: unknown, found: Set<ArrayBuffer>): Set<ArrayBuffer> {
  if (ArrayBuffer.isView(value)) {
    if (value.buffer instanceof ArrayBuffer) found.add(value.buffer);
  } else if (Array.isArray(value)) {
    for (const item of value) buffersOf(item, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) buffersOf(item, found);
  }
  return found;
}

/** Runs in the worker: loads the engine, answers calls in order. */
export function serve(
  port: ServerPort,
  create: (options: CreateOptions) => Promise<AttnScope>,
): void {
  let engine: Promise<AttnScope> | undefined;
  const models = modelHost();
  port.listen(async (data) => {
    const message = data as ToWorker;
    if (message.type === 'init') {
      engine = create(message.options);
      engine.then(
        (e) =>
          port.post(
            {
              type: 'ready',
              version: e.version,
              simdArch: e.simdArch,
              threads: e.threads,
            } satisfies FromWorker,
            [],
          ),
        (e: unknown) =>
          port.post(
            {
              type: 'init-error',
              message: e instanceof Error ? e.message : String(e),
            } satisfies FromWorker,
            [],
          ),
      );
      return;
    }
    const { id, method, args } = message;
    try {
      if (!engine) throw new AttnScopeError('worker: not initialised');
      if (!kAllMethods.includes(method))
        throw new AttnScopeError(`worker: unknown method ${String(method)}`);
      const ready = await engine;
      const value = (kModelMethods as readonly string[]).includes(method)
        ? await models(ready, method as ModelMethod, args)
        : (ready[method as (typeof kMethods)[number]] as (a: unknown) => unknown)(args);
      port.post({ type: 'result', id, ok: true, value } satisfies FromWorker, [
        ...buffersOf(value, new Set()),
      ]);
    } catch (e) {
      const error = e instanceof Error ? e : new Error(String(e));
      port.post(
        {
          type: 'result',
          id,
          ok: false,
          name: error.name,
          message: error.message,
        } satisfies FromWorker,
        [],
      );
    }
  });
}

/**
 * `version` and `simdArch` as Promises from `ready`. Callers may only ever
 * await method results, so these must not surface as unhandled rejections.
 */
export function infoOf(ready: Promise<WorkerInfo>): Pick<AttnScopeWorker, 'version' | 'simdArch'> {
  const version = ready.then((r) => r.version);
  const simdArch = ready.then((r) => r.simdArch);
  version.catch(() => undefined);
  simdArch.catch(() => undefined);
  return { version, simdArch };
}

/** Runs on the calling side: a proxy with the engine's methods returning Promises. */
export function createClient(port: ClientPort, options: WorkerCreateOptions): AttnScopeWorker {
  const pending = new Map<number, { resolve: (v: unknown) => void; reject: (e: Error) => void }>();
  let nextId = 1;
  let failure: Error | undefined;
  let settleReady!: { resolve: (v: WorkerInfo) => void; reject: (e: Error) => void };
  const ready = new Promise<WorkerInfo>((resolve, reject) => {
    settleReady = { resolve, reject };
  });
  // Callers may only ever await method results; an unobserved `ready` must not
  // surface as an unhandled rejection.
  ready.catch(() => undefined);

  const failAll = (error: Error): void => {
    failure ??= error;
    settleReady.reject(error);
    for (const { reject } of pending.values()) reject(error);
    pending.clear();
  };

  port.listen((data) => {
    const message = data as FromWorker;
    if (message.type === 'ready')
      settleReady.resolve({
        version: message.version,
        simdArch: message.simdArch,
        threads: message.threads,
      });
    else if (message.type === 'init-error') settleReady.reject(new AttnScopeError(message.message));
    else {
      const call = pending.get(message.id);
      if (!call) return;
      pending.delete(message.id);
      if (message.ok) call.resolve(message.value);
      else
        call.reject(
          message.name === 'AttnScopeError'
            ? new AttnScopeError(message.message)
            : new Error(message.message),
        );
    }
  }, failAll);

  const init: InitOptions = {};
  if (options.wasmBinary !== undefined) init.wasmBinary = options.wasmBinary;
  else if (options.wasmUrl !== undefined) init.wasmUrl = String(options.wasmUrl);
  if (options.simd !== undefined) init.simd = options.simd;
  if (options.threads !== undefined) init.threads = options.threads;
  port.post({ type: 'init', options: init } satisfies ToWorker, []);

  function call<T>(method: Method, args?: unknown, transfer: ArrayBuffer[] = []): Promise<T> {
    if (failure) return Promise.reject(failure);
    const id = nextId++;
    return new Promise<T>((resolve, reject) => {
      pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      try {
        port.post({ type: 'call', id, method, args } satisfies ToWorker, transfer);
      } catch (e) {
        pending.delete(id);
        reject(
          new AttnScopeError(
            `${method}: arguments cannot be sent to the worker (${e instanceof Error ? e.message : String(e)})`,
          ),
        );
      }
    });
  }

  return {
    ready,
    ...infoOf(ready),
    selfAttention: (args, transfer) => call('selfAttention', args, transfer),
    attention: (args, transfer) =>
      keepingAttentionOutput(args, (rest) => call('attention', rest, transfer)),
    positionalEncoding: (args, transfer) => call('positionalEncoding', args, transfer),
    linear: (args, transfer) => keepingLinearOutput(args, (rest) => call('linear', rest, transfer)),
    layerNorm: (args, transfer) => call('layerNorm', args, transfer),
    feedForward: (args, transfer) => call('feedForward', args, transfer),
    residualAdd: (args, transfer) => call('residualAdd', args, transfer),
    transformerBlock: (args, transfer) => call('transformerBlock', args, transfer),
    rmsNorm: (args, transfer) => call('rmsNorm', args, transfer),
    swiglu: (args, transfer) => call('swiglu', args, transfer),
    llamaBlock: (args, transfer) => call('llamaBlock', args, transfer),
    loadModel: async (bytes, options, transfer) =>
      workerModel(call, await call('loadModel', { bytes, options }, transfer)),
    loadModelFromBlob: async (blob, options) =>
      workerModel(call, await call('loadModelFromBlob', { blob, options })),
    createModel: async (args) => workerModel(call, await call('createModel', args)),
    memoryUsage: () => call('memoryUsage'),
    terminate() {
      port.terminate();
      failAll(new AttnScopeError('worker terminated'));
    },
  };
}
