// Models in a worker: the worker keeps each loaded or created Model, and each
// of their trainers, under a handle (modelHost), and the calling side gets a
// WorkerModel / WorkerTrainer whose methods post to it and return Promises
// (workerModel). Both travel through the worker protocol's ordinary calls
// (worker-protocol.ts).
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
import type {
  CreateModelArgs,
  Trainer,
  TrainerOptions,
  TrainStepArgs,
  TrainStepResult,
} from './train-types.js';
import type { AttnScope, TensorOut } from './types.js';

/** The worker protocol's method names for models. */
export const kModelMethods = [
  'loadModel',
  'loadModelFromBlob',
  'createModel',
  'modelForward',
  'modelGenerate',
  'modelSave',
  'modelWeight',
  'modelDispose',
  'modelTrainer',
  'trainerStep',
  'trainerGradient',
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
  /** See {@link Model.trainer}: the trainer lives in the worker with its model. */
  trainer(options: TrainerOptions): Promise<WorkerTrainer>;
  /** Frees the model (and its trainers) in the worker; later calls reject with AttnScopeError. */
  dispose(): Promise<void>;
}

/** A trainer living in a worker: the methods of {@link Trainer}, returning Promises. */
export interface WorkerTrainer {
  step(args: TrainStepArgs): Promise<TrainStepResult>;
  gradient(name: string): Promise<TensorOut>;
  /** Steps this trainer has completed. */
  readonly steps: number;
}

interface HandleArgs {
  handle: number;
  args?: unknown;
}

/** Runs in the worker: the models loaded there, by handle. */
export function modelHost(): (engine: AttnScope, method: ModelMethod, args: unknown) => unknown {
  const models = new Map<number, Model>();
  const trainers = new Map<number, { trainer: Trainer; model: number }>();
  let next = 1;
  const model = (method: string, handle: unknown): Model => {
    const m = models.get(handle as number);
    if (!m) throw new AttnScopeError(`model.${method}: the model was disposed`);
    return m;
  };
  const trainer = (method: string, handle: unknown): Trainer => {
    const t = trainers.get(handle as number);
    if (!t) throw new AttnScopeError(`trainer.${method}: the trainer's model was disposed`);
    return t.trainer;
  };
  const keep = (created: Model) => {
    const handle = next++;
    models.set(handle, created);
    return { handle, config: created.config };
  };
  return (engine, method, args) => {
    if (method === 'loadModel') {
      const { bytes, options } = args as { bytes: Uint8Array; options?: LoadModelOptions };
      return keep(engine.loadModel(bytes, options));
    }
    if (method === 'createModel') return keep(engine.createModel(args as CreateModelArgs));
    if (method === 'loadModelFromBlob') {
      const { blob, options } = args as { blob: Blob; options?: LoadModelFromBlobOptions };
      return engine.loadModelFromBlob(blob, options).then(keep);
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
      case 'modelTrainer': {
        const created = model('trainer', handle).trainer(inner as TrainerOptions);
        const trainerHandle = next++;
        trainers.set(trainerHandle, { trainer: created, model: handle });
        return trainerHandle;
      }
      case 'trainerStep':
        return trainer('step', handle).step(inner as TrainStepArgs);
      case 'trainerGradient':
        return trainer('gradient', handle).gradient(inner as string);
      case 'modelDispose':
        models.get(handle)?.dispose();
        models.delete(handle);
        for (const [key, t] of trainers) if (t.model === handle) trainers.delete(key);
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
    trainer: async (options) =>
      workerTrainer(call, await call<number>('modelTrainer', { handle, args: options })),
    dispose: () => call('modelDispose', { handle }),
  };
}

/** Runs on the calling side: the proxy of a trainer made in the worker. */
function workerTrainer(
  call: <T>(method: ModelMethod, args: unknown) => Promise<T>,
  handle: number,
): WorkerTrainer {
  let steps = 0;
  return {
    get steps() {
      return steps;
    },
    async step(args) {
      const result = await call<TrainStepResult>('trainerStep', { handle, args });
      steps += 1;
      return result;
    },
    gradient: (name) => call('trainerGradient', { handle, args: name }),
  };
}
