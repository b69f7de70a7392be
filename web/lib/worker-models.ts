// Models in a worker: the worker keeps each loaded Model under a handle
// (modelHost), and the calling side gets a WorkerModel whose methods post
// to it and return Promises (workerModel). Both travel through the worker
// protocol's ordinary calls (worker-protocol.ts).
import { AttnScopeError } from './errors.js';
import type {
  GenerateArgs,
  GenerateResult,
  LoadModelFromBlobOptions,
  LoadModelOptions,
  Model,
  ModelConfig,
  ModelForwardArgs,
  ModelForwardResult,
} from './model-types.js';
import type { AttnScope, TensorOut } from './types.js';

/** The worker protocol's method names for models. */
export const kModelMethods = [
  'loadModel',
  'loadModelFromBlob',
  'modelForward',
  'modelGenerate',
  'modelSave',
  'modelWeight',
  'modelDispose',
] as const;
export type ModelMethod = (typeof kModelMethods)[number];

/**
 * A model living in a worker: the methods of {@link Model}, returning
 * Promises. `onToken` cannot cross to the worker, so generate takes none.
 */
export interface WorkerModel {
  readonly config: ModelConfig;
  forward(args: ModelForwardArgs): Promise<ModelForwardResult>;
  generate(args: Omit<GenerateArgs, 'onToken'>): Promise<GenerateResult>;
  save(): Promise<Uint8Array>;
  weight(name: string): Promise<TensorOut>;
  /** Frees the model in the worker; later calls reject with AttnScopeError. */
  dispose(): Promise<void>;
}

interface HandleArgs {
  handle: number;
  args?: unknown;
}

/** Runs in the worker: the models loaded there, by handle. */
export function modelHost(): (engine: AttnScope, method: ModelMethod, args: unknown) => unknown {
  const models = new Map<number, Model>();
  let next = 1;
  const model = (method: string, handle: unknown): Model => {
    const m = models.get(handle as number);
    if (!m) throw new AttnScopeError(`model.${method}: the model was disposed`);
    return m;
  };
  return (engine, method, args) => {
    if (method === 'loadModel') {
      const { bytes, options } = args as { bytes: Uint8Array; options?: LoadModelOptions };
      const loaded = engine.loadModel(bytes, options);
      const handle = next++;
      models.set(handle, loaded);
      return { handle, config: loaded.config };
    }
    if (method === 'loadModelFromBlob') {
      const { blob, options } = args as { blob: Blob; options?: LoadModelFromBlobOptions };
      return engine.loadModelFromBlob(blob, options).then((loaded) => {
        const handle = next++;
        models.set(handle, loaded);
        return { handle, config: loaded.config };
      });
    }
    const { handle, args: inner } = args as HandleArgs;
    switch (method) {
      case 'modelForward':
        return model('forward', handle).forward(inner as ModelForwardArgs);
      case 'modelGenerate':
        return model('generate', handle).generate(inner as GenerateArgs);
      case 'modelSave':
        return model('save', handle).save();
      case 'modelWeight':
        return model('weight', handle).weight(inner as string);
      case 'modelDispose':
        models.get(handle)?.dispose();
        models.delete(handle);
        return undefined;
    }
  };
}

/** Runs on the calling side: the proxy of a model loaded in the worker. */
export function workerModel(
  call: <T>(method: ModelMethod, args: unknown) => Promise<T>,
  loaded: { handle: number; config: ModelConfig },
): WorkerModel {
  const { handle, config } = loaded;
  return {
    config,
    forward: (args) => call('modelForward', { handle, args }),
    generate: (args) => call('modelGenerate', { handle, args }),
    save: () => call('modelSave', { handle }),
    weight: (name) => call('modelWeight', { handle, args: name }),
    dispose: () => call('modelDispose', { handle }),
  };
}
