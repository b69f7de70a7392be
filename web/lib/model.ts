// Models in the engine: engine.loadModel decodes a .safetensors file's
// tensors straight into the storage the core allocated for them (the file is
// never held twice), and the returned Model runs, generates, saves and frees
// the model that lives in wasm memory behind its handle (cpp/bindings/models.hpp).
import type { AttnModule } from './attnscope.mjs';
import {
  callEngine,
  callEngineReading,
  type CallInputs,
  type CallOutputs,
  type CallTensor,
} from './call.js';
import { generateTokens, modelTokens } from './model-generate.js';
import {
  analysisResults,
  forwardAnalysis,
  hiddenEntries,
  keepHidden,
  layerList,
} from './model-forward-options.js';
import { assemble, copyResult, sharedPrefix, type PrefixRun } from './model-prefix.js';
import { createTrainer } from './model-trainer.js';
import { gpt2TensorShapes, readGpt2 } from './model-load.js';
import type {
  LoadModelOptions,
  Model,
  ModelConfig,
  ModelForwardArgs,
  ModelForwardResult,
} from './model-types.js';
import { decodeTensor, parseSafetensors, writeSafetensors } from './safetensors.js';
import { AttnScopeError, toAttnScopeError } from './errors.js';
import { describe, fail, own } from './tensors.js';
import type { TensorOut } from './types.js';

/** The engine's memory check (engine.ts): refuses `work` bytes wasm memory cannot provide. */
export type RequireMemory = (
  fn: string,
  inputs: CallInputs,
  work: number,
  copies: number,
  what?: string,
) => void;

/** Runs one of the registry's runners on model `handle`. */
export function modelCall(
  raw: AttnModule,
  fn: string,
  runner: string,
  handle: number,
  inputs: CallInputs = {},
): CallOutputs {
  return modelCallReading(raw, fn, runner, handle, inputs, null);
}

/** modelCall handing `read` views of the outputs (callEngineReading), unless `read` is null. */
function modelCallReading<T = CallOutputs>(
  raw: AttnModule,
  fn: string,
  runner: string,
  handle: number,
  inputs: CallInputs,
  read: ((views: CallOutputs) => T) | null,
): T {
  const withModel = { ...inputs, numbers: { ...inputs.numbers, model: handle } };
  try {
    return read
      ? callEngineReading(fn, raw, runner, withModel, read)
      : (callEngine(fn, raw, runner, withModel) as T);
  } catch (e) {
    // The core names its own C++ method ("Gpt2Model::finish: …"); the
    // caller called a package function, so that is the name to read.
    if (e instanceof AttnScopeError && e.message.startsWith('Gpt2Model'))
      throw new AttnScopeError(`${fn}: ${e.message.replace(/^Gpt2Model::\w+: /, '')}`);
    throw e;
  }
}

/**
 * One weight's values in row order: a view of its storage in wasm memory
 * (valid until the next call into the module), or a copy where the core keeps
 * it in the products' panels (a block's matrix).
 */
function weightValues(raw: AttnModule, fn: string, handle: number, name: string): Float32Array {
  const out = modelCall(raw, fn, 'gpt2_weight', handle, {
    texts: { name },
    numbers: { write: false },
  });
  if (out.values) return (out.values as CallTensor).data;
  return new Float32Array(raw.HEAPF32.buffer, out.address as number, out.size as number);
}

/**
 * The address and element count of one weight's storage in wasm memory, to be
 * written in row order (reads go through weightValues).
 */
export function weightStorage(
  raw: AttnModule,
  fn: string,
  handle: number,
  name: string,
): { address: number; size: number } {
  const out = modelCall(raw, fn, 'gpt2_weight', handle, {
    texts: { name },
    numbers: { write: true },
  });
  return { address: out.address as number, size: out.size as number };
}

/**
 * Loads a GPT-2 from `bytes`: checks the whole header and every tensor
 * before allocating, then decodes each tensor into the core's storage; on
 * any error the half-built model is freed.
 */
export function loadModel(
  raw: AttnModule,
  requireMemory: RequireMemory,
  bytes: unknown,
  options: LoadModelOptions | undefined,
): Model {
  const fn = 'loadModel';
  if (!(bytes instanceof Uint8Array))
    fail(fn, `bytes must be a Uint8Array of a .safetensors file, got ${describe(bytes)}`);
  if (options !== undefined && (typeof options !== 'object' || options === null))
    fail(fn, `options must be an object, got ${describe(options)}`);
  const { config, entries } = readGpt2(fn, parseSafetensors(bytes), own(options, 'config'));
  const handle = allocateModel(raw, requireMemory, fn, config, entries.length);
  try {
    for (const [name, , entry] of entries) {
      const { address, size } = weightStorage(raw, fn, handle, name);
      // The view is made after the call: a call may grow (and so replace) the memory buffer.
      decodeTensor(bytes, entry, new Float32Array(raw.HEAPF32.buffer, address, size));
    }
    modelCall(raw, fn, 'gpt2_finish', handle);
  } catch (e) {
    modelCall(raw, fn, 'gpt2_free', handle);
    throw e;
  }
  return modelHandle(raw, requireMemory, handle, config);
}

/**
 * The core's storage for a model of `config` (zeros, filled by the caller
 * through gpt2_weight), after checking that wasm memory can hold it; its handle.
 */
export function allocateModel(
  raw: AttnModule,
  requireMemory: RequireMemory,
  fn: string,
  config: ModelConfig,
  tensors: number,
): number {
  const weightBytes = gpt2TensorShapes(config).reduce(
    (sum, [, shape]) => sum + 4 * shape.reduce((a, b) => a * b),
    0,
  );
  requireMemory(fn, {}, weightBytes, 0, `a model of ${tensors} tensors`);
  const created = callEngine(fn, raw, 'gpt2_create', {
    numbers: {
      layers: config.layers,
      heads: config.heads,
      dModel: config.dModel,
      vocabSize: config.vocabSize,
      contextLength: config.contextLength,
    },
  });
  return created.model as number;
}

/** Every exception of a model method as an AttnScopeError. */
function guarded<A extends unknown[], R>(fn: string, body: (...args: A) => R): (...args: A) => R {
  return (...args: A) => {
    try {
      return body(...args);
    } catch (e) {
      throw toAttnScopeError(fn, e);
    }
  };
}

/** The Model object of the core's model `handle` (loaded, or made by createModel). */
export function modelHandle(
  raw: AttnModule,
  requireMemory: RequireMemory,
  handle: number,
  config: ModelConfig,
): Model {
  let disposed = false;
  const live = (fn: string) => {
    if (disposed) fail(fn, 'the model was disposed');
  };

  function forward(args: ModelForwardArgs): ModelForwardResult {
    const fn = 'model.forward';
    live(fn);
    if (typeof args !== 'object' || args === null)
      fail(fn, `expects an object of named arguments, got ${describe(args)}`);
    const tokens = modelTokens(fn, own(args, 'tokens'), config);
    const traceArg = own(args, 'trace');
    if (traceArg !== undefined && typeof traceArg !== 'boolean')
      fail(fn, `trace must be a boolean, got ${describe(traceArg)}`);
    const trace = traceArg !== false;
    const logitsArg = own(args, 'logits');
    const logitRows = logitsArg === undefined ? 'all' : logitsArg;
    if (logitRows !== 'all' && logitRows !== 'last')
      fail(
        fn,
        `logits must be 'all' or 'last', got ${typeof logitRows === 'string' ? `'${logitRows}'` : describe(logitRows)}`,
      );
    const T = tokens.length;
    const analysis = forwardAnalysis(fn, args, config, T, trace);
    const wantedHidden = hiddenEntries(fn, own(args, 'hidden'), config, trace);
    const reuse = own(args, 'reusePrefix');
    if (reuse !== undefined && typeof reuse !== 'boolean')
      fail(fn, `reusePrefix must be a boolean, got ${describe(reuse)}`);
    if (reuse && (analysis.intervenes || analysis.attribution || analysis.logitLensTopK))
      fail(
        fn,
        'reusePrefix runs plain forwards only: not with interventions, attribution or logitLens',
      );
    const { layers, heads, dModel, vocabSize } = config;
    const logits = (logitRows === 'last' ? 1 : T) * vocabSize * 4;
    const traced = trace ? (layers * heads * T * T + (layers + 1) * T * dModel) * 4 : 0;
    // An intervened forward keeps the clean run and the diff beside its own.
    const runs = analysis.intervenes ? 3 : 1;
    const extra =
      (analysis.attribution ? layers * (heads + 1) * T * T * 4 : 0) +
      (analysis.logitLensTopK
        ? 2 * layers * T * analysis.logitLensTopK * 4 + T * vocabSize * 4
        : 0);
    // Per block: the residual stream, queries, keys, values, the MLP, and
    // while one head runs traced its four T×T tensors.
    const work = T * dModel * 4 * 12 + (trace ? 4 * T * T * 4 : 0);
    const kept = runs * (logits + traced) + extra;
    requireMemory(fn, {}, kept + work, kept, `a forward pass of ${T} tokens`);
    // Only the final LayerNorm's rows read the last block's rows other than the last:
    // when no one asks for them, the core runs that block's projection and MLP on the last.
    const lastBlockEveryRow =
      logitRows === 'all' ||
      analysis.logitLensTopK > 0 ||
      (trace && (wantedHidden === null || wantedHidden[layers] === true));
    if (reuse)
      return forwardReusingPrefix(fn, tokens, trace, logitRows, wantedHidden, lastBlockEveryRow);
    const out = modelCall(raw, fn, 'gpt2_forward', handle, {
      texts: { logits: logitRows },
      numbers: {
        trace,
        attribution: analysis.attribution,
        logitLensTopK: analysis.logitLensTopK,
        lastBlockEveryRow,
      },
      counts: { tokens, ...analysis.counts },
    });
    const result: ModelForwardResult = { logits: out.logits as CallTensor };
    if (trace) {
      result.attentions = layerList(out.attentions as CallOutputs);
      result.hidden = keepHidden(layerList(out.hidden as CallOutputs), wantedHidden);
    }
    return Object.assign(result, analysisResults(out));
  }

  // The last reusePrefix run; its rows before an edit are those of the next.
  let lastPrefixRun: PrefixRun | null = null;
  function forwardReusingPrefix(
    fn: string,
    tokens: number[],
    trace: boolean,
    logits: 'all' | 'last',
    wantedHidden: boolean[] | null,
    lastBlockEveryRow: boolean,
  ): ModelForwardResult {
    const run = { trace, logits, finalRows: trace && lastBlockEveryRow };
    const shared = sharedPrefix(lastPrefixRun, tokens, run);
    const last = lastPrefixRun;
    lastPrefixRun = null; // until this run succeeds, nothing is reused
    // The new rows go from wasm memory straight into the kept ones.
    const kept = modelCallReading(
      raw,
      fn,
      'gpt2_extend',
      handle,
      {
        texts: { logits },
        numbers: { keep: shared, trace, lastBlockEveryRow },
        counts: { tokens },
      },
      // The core may keep fewer than asked (its cache was dropped when the weights changed).
      (views) => assemble(last, views, views.first as number, tokens.length, config, run),
    );
    lastPrefixRun = { tokens, ...run, kept };
    return copyResult(kept, wantedHidden);
  }

  function save(): Uint8Array {
    const fn = 'model.save';
    live(fn);
    // Each tensor is read as its bytes are written, before the next call:
    // a view of the storage stays valid until then.
    const tensors = gpt2TensorShapes(config).map(([name, shape]) => ({
      name,
      shape,
      data: () => weightValues(raw, fn, handle, name),
    }));
    return writeSafetensors(tensors, { n_head: String(config.heads) });
  }

  function weight(name: string): TensorOut {
    const fn = 'model.weight';
    live(fn);
    if (typeof name !== 'string') fail(fn, `name must be a string, got ${describe(name)}`);
    const shape = gpt2TensorShapes(config).find(([n]) => n === name)?.[1];
    if (!shape)
      fail(fn, `the model has no weight ${name} (names as in the file, without "transformer.")`);
    const values = weightValues(raw, fn, handle, name);
    return { data: values.buffer === raw.HEAPF32.buffer ? values.slice() : values, shape };
  }

  function dispose(): void {
    if (disposed) return;
    modelCall(raw, 'model.dispose', 'gpt2_free', handle);
    disposed = true;
  }

  return {
    config: Object.freeze({ ...config }),
    forward: guarded('model.forward', forward),
    generate: guarded('model.generate', (args) => {
      live('model.generate');
      return generateTokens(raw, requireMemory, handle, config, args);
    }),
    save: guarded('model.save', save),
    weight: guarded('model.weight', weight),
    trainer: guarded('model.trainer', (options) => {
      live('model.trainer');
      const run = (fn: string, runner: string, inputs?: CallInputs) => {
        live(fn);
        return modelCall(raw, fn, runner, handle, inputs);
      };
      return createTrainer(run, requireMemory, config, options);
    }),
    dispose: guarded('model.dispose', dispose),
    get disposed() {
      return disposed;
    },
  };
}
