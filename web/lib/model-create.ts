// engine.createModel: a GPT-2 of the given sizes with GPT-2's initialisation
// from a seed (done in the core), returned as the same Model object that
// loadModel gives, so forward, generate, save, dispose and trainer work on it.
import type { AttnModule } from './attnscope.mjs';
import { callEngine } from './call.js';
import { modelCall, modelHandle, type RequireMemory } from './model.js';
import type { Model, ModelConfig } from './model-types.js';
import { describe, fail, integerIn, kMaxDimension, own, positiveInt } from './tensors.js';

const kFields = ['layers', 'heads', 'dModel', 'vocabSize', 'contextLength', 'seed'];

export function createModel(raw: AttnModule, requireMemory: RequireMemory, args: unknown): Model {
  const fn = 'createModel';
  if (typeof args !== 'object' || args === null)
    fail(
      fn,
      `expects an object { layers, heads, dModel, vocabSize, contextLength, seed }, got ${describe(args)}`,
    );
  for (const key of Object.keys(args)) {
    if (!kFields.includes(key))
      fail(fn, `has an unknown field '${key}' (expected ${kFields.join(', ')})`);
  }
  const config: ModelConfig = {
    architecture: 'gpt2',
    layers: positiveInt(fn, 'layers', own(args, 'layers')),
    heads: positiveInt(fn, 'heads', own(args, 'heads')),
    dModel: positiveInt(fn, 'dModel', own(args, 'dModel')),
    vocabSize: positiveInt(fn, 'vocabSize', own(args, 'vocabSize')),
    contextLength: positiveInt(fn, 'contextLength', own(args, 'contextLength')),
  };
  if (config.dModel % config.heads !== 0)
    fail(fn, `dModel=${config.dModel} is not a multiple of heads=${config.heads}`);
  const seedArg = own(args, 'seed');
  const seed = seedArg === undefined ? 0 : integerIn(fn, 'seed', seedArg, 0, 2 ** 32 - 1);
  const { layers, dModel, vocabSize, contextLength } = config;
  const weights = vocabSize * dModel + contextLength * dModel + layers * 12 * dModel * dModel;
  if (weights > kMaxDimension)
    fail(fn, `the model would have ${weights} weights, more than ${kMaxDimension}`);
  requireMemory(fn, {}, 4 * weights, 0, `a model of ${weights} weights`);

  const created = callEngine(fn, raw, 'gpt2_create', {
    numbers: { layers, heads: config.heads, dModel, vocabSize, contextLength },
  });
  const handle = created.model as number;
  try {
    modelCall(raw, fn, 'gpt2_init', handle, { numbers: { seed } });
  } catch (e) {
    modelCall(raw, fn, 'gpt2_free', handle);
    throw e;
  }
  return modelHandle(raw, requireMemory, handle, config);
}
