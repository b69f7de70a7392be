// model.trainer(): an AdamW trainer of a model living in the engine. The
// trainer's state (gradients and moments) lives beside the model in the
// core's registry and is freed with it; a newer trainer of the same model
// replaces it.
import type { CallInputs, CallOutputs } from './call.js';
import { AttnScopeError } from './errors.js';
import { modelTokens } from './model-generate.js';
import type { ModelConfig } from './model-types.js';
import type { RequireMemory } from './model.js';
import { describe, fail, finiteNumber, integerIn, kMaxDimension, own } from './tensors.js';
import type { Trainer, TrainStepArgs, TrainStepResult } from './train-types.js';
import type { TensorOut } from './types.js';

/** Runs a registry runner on the trainer's model. */
export type ModelRunner = (fn: string, runner: string, inputs?: CallInputs) => CallOutputs;

const kOptionFields = ['lr', 'betas', 'weightDecay', 'clip', 'eps', 'warmup', 'totalSteps'];

function nonNegative(fn: string, name: string, value: unknown, fallback: number): number {
  if (value === undefined) return fallback;
  const x = finiteNumber(fn, name, value);
  if (x < 0) fail(fn, `${name} is ${x}, expected a number >= 0`);
  return x;
}

function trainerInputs(fn: string, options: unknown): CallInputs {
  if (typeof options !== 'object' || options === null)
    fail(
      fn,
      `expects an object of options ({ lr, betas, weightDecay, clip }), got ${describe(options)}`,
    );
  for (const key of Object.keys(options)) {
    if (!kOptionFields.includes(key))
      fail(fn, `has an unknown option '${key}' (expected ${kOptionFields.join(', ')})`);
  }
  const lr = finiteNumber(fn, 'lr', own(options, 'lr'));
  if (!(lr > 0)) fail(fn, `lr is ${lr}, expected a number > 0`);
  let betas = [0.9, 0.95];
  const betasArg = own(options, 'betas');
  if (betasArg !== undefined) {
    if (!Array.isArray(betasArg) || betasArg.length !== 2)
      fail(fn, `betas must be an array of two numbers [β1, β2], got ${describe(betasArg)}`);
    betas = betasArg.map((b: unknown, i: number) => {
      const x = finiteNumber(fn, `betas[${i}]`, b);
      if (!(x >= 0 && x < 1)) fail(fn, `betas[${i}] is ${x}, expected a number in [0, 1)`);
      return x;
    });
  }
  const eps =
    own(options, 'eps') === undefined ? 1e-8 : finiteNumber(fn, 'eps', own(options, 'eps'));
  if (!(eps > 0)) fail(fn, `eps is ${eps}, expected a number > 0`);
  const count = (name: string) => {
    const v = own(options, name);
    return v === undefined ? 0 : integerIn(fn, name, v, 0, kMaxDimension);
  };
  return {
    numbers: {
      lr,
      beta1: betas[0]!,
      beta2: betas[1]!,
      eps,
      weightDecay: nonNegative(fn, 'weightDecay', own(options, 'weightDecay'), 0),
      clip: nonNegative(fn, 'clip', own(options, 'clip'), 0),
      warmup: count('warmup'),
      totalSteps: count('totalSteps'),
    },
  };
}

/** The batch of a step: token ids and B, checked against the model. */
function stepInputs(fn: string, args: unknown, config: ModelConfig): CallInputs {
  if (typeof args !== 'object' || args === null)
    fail(fn, `expects an object { tokens, shape: [B, T], lossMask? }, got ${describe(args)}`);
  const shape = own(args, 'shape');
  if (!Array.isArray(shape) || shape.length !== 2)
    fail(
      fn,
      `shape must be [B, T], got ${Array.isArray(shape) ? `[${shape.join(', ')}]` : describe(shape)}`,
    );
  const batch = integerIn(fn, 'shape[0] (B)', shape[0], 1, kMaxDimension);
  const length = integerIn(fn, 'shape[1] (T)', shape[1], 2, config.contextLength + 1);
  const tokens = modelTokens(fn, own(args, 'tokens'), config, batch * length);
  if (tokens.length !== batch * length)
    fail(
      fn,
      `tokens has ${tokens.length} ids, expected B·T = ${batch}·${length} = ${batch * length}`,
    );
  const lossMask = own(args, 'lossMask');
  if (lossMask === undefined) return { numbers: { batch }, counts: { tokens } };
  return {
    numbers: { batch },
    counts: { tokens },
    bytes: {
      lossMask: { data: lossMaskFlags(fn, lossMask, batch, length), shape: [batch, length - 1] },
    },
  };
}

/** lossMask as B·(T − 1) bytes, each 0 or 1, at least one 1. */
function lossMaskFlags(fn: string, value: unknown, batch: number, length: number): Uint8Array {
  if (!(value instanceof Uint8Array) && !Array.isArray(value))
    fail(fn, `lossMask must be a Uint8Array or an array of 0s and 1s, got ${describe(value)}`);
  const list = value as ArrayLike<unknown>;
  const expected = batch * (length - 1);
  if (list.length !== expected)
    fail(
      fn,
      `lossMask has ${list.length} entries, expected B·(T − 1) = ${batch}·${length - 1} = ${expected}`,
    );
  const flags = new Uint8Array(expected);
  let selected = 0;
  for (let i = 0; i < expected; i++) {
    const flag = list[i];
    if (flag !== 0 && flag !== 1)
      fail(
        fn,
        `lossMask[${i}] is ${typeof flag === 'number' ? flag : describe(flag)}, expected 0 or 1`,
      );
    flags[i] = flag;
    selected += flag;
  }
  if (selected === 0) fail(fn, 'lossMask selects no prediction: at least one entry must be 1');
  return flags;
}

/** Memory of a step: activations (~16 floats per row and channel, plus the logits twice). */
function stepBytes(config: ModelConfig, rows: number): number {
  const { layers, dModel, vocabSize, heads } = config;
  return 4 * rows * (layers * (16 * dModel + heads) + 4 * dModel + 2 * vocabSize);
}

export function createTrainer(
  run: ModelRunner,
  requireMemory: RequireMemory,
  config: ModelConfig,
  options: unknown,
): Trainer {
  const fn = 'model.trainer';
  const inputs = trainerInputs(fn, options);
  const { layers, dModel, vocabSize, contextLength } = config;
  const weights = vocabSize * dModel + contextLength * dModel + layers * 12 * dModel * dModel;
  // Gradients and the two moments: three floats per weight.
  requireMemory(fn, {}, 12 * weights, 0, 'the trainer (gradients and AdamW moments)');
  // The core names its own class ("Gpt2Trainer::step: …"); the caller called a package method.
  const call: ModelRunner = (name, runner, callInputs) => {
    try {
      return run(name, runner, callInputs);
    } catch (e) {
      if (e instanceof AttnScopeError && e.message.startsWith('Gpt2Trainer'))
        throw new AttnScopeError(`${name}: ${e.message.replace(/^Gpt2Trainer(::\w+)?: /, '')}`);
      throw e;
    }
  };
  const id = call(fn, 'gpt2_trainer', inputs).trainer as number;
  let steps = 0;
  return {
    step(args: TrainStepArgs): TrainStepResult {
      const stepFn = 'trainer.step';
      const batch = stepInputs(stepFn, args, config);
      const rows = batch.counts!.tokens!.length;
      requireMemory(stepFn, batch, stepBytes(config, rows), 0, `a training step of ${rows} tokens`);
      const out = call(stepFn, 'gpt2_train_step', {
        ...batch,
        numbers: { ...batch.numbers, trainer: id },
      });
      steps++;
      return {
        loss: out.loss as number,
        gradientNorm: out.gradientNorm as number,
        learningRate: out.learningRate as number,
      };
    },
    gradient(name: string): TensorOut {
      const gradientFn = 'trainer.gradient';
      if (typeof name !== 'string')
        fail(gradientFn, `name must be a weight's name (a string), got ${describe(name)}`);
      const out = call(gradientFn, 'gpt2_gradient', {
        numbers: { trainer: id },
        texts: { name },
      });
      return out.gradient as TensorOut;
    },
    get steps() {
      return steps;
    },
  };
}
