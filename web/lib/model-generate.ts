// model.generate: the prompt runs once into a fresh key/value cache, then
// every new token is one cached step (the core's Tq < Tk attention path);
// tokens are chosen by sampling.ts with a seeded generator, so a seed always
// gives the same tokens. The cache is freed when generation ends, however it ends.
import type { AttnModule } from './attnscope.mjs';
import { callEngine, type CallTensor } from './call.js';
import type { RequireMemory } from './model.js';
import type { GenerateArgs, GenerateResult, ModelConfig } from './model-types.js';
import { mulberry32 } from './reference.js';
import { sampleToken, type SamplingOptions } from './sampling.js';
import { describe, fail, finiteNumber, integerIn, kMaxDimension, own } from './tensors.js';

const fn = 'model.generate';
/** Greedy generations of at least this many tokens use the core's greedy head. */
const kGreedyHeadMinTokens = 16;

/** Token ids as a checked list: 1..contextLength integers in [0, vocabSize). */
export function modelTokens(
  fn: string,
  value: unknown,
  config: ModelConfig,
  room = config.contextLength,
): number[] {
  const isInt32 = value instanceof Int32Array;
  if (!isInt32 && !Array.isArray(value))
    fail(fn, `tokens must be an Int32Array or an array of token ids, got ${describe(value)}`);
  const list = value as ArrayLike<unknown>;
  if (list.length === 0) fail(fn, 'tokens is empty, expected at least one token id');
  if (list.length > room)
    fail(fn, `tokens has ${list.length} ids, more than the ${room} the model can take`);
  const out = new Array<number>(list.length);
  for (let i = 0; i < list.length; i++) {
    if (!isInt32 && !Object.prototype.hasOwnProperty.call(list, i))
      fail(fn, `tokens[${i}] is missing (a hole in the array)`);
    const id = list[i];
    if (typeof id !== 'number' || !Number.isInteger(id) || id < 0 || id >= config.vocabSize) {
      const got = typeof id === 'number' ? id : describe(id);
      fail(fn, `tokens[${i}] is ${got}, expected a token id in [0, vocabSize=${config.vocabSize})`);
    }
    out[i] = id;
  }
  return out;
}

function samplingOptions(args: object): SamplingOptions {
  const options: SamplingOptions = {};
  const temperature = own(args, 'temperature');
  if (temperature !== undefined) {
    options.temperature = finiteNumber(fn, 'temperature', temperature);
    if (options.temperature < 0) fail(fn, `temperature must be >= 0, got ${temperature}`);
  }
  const topK = own(args, 'topK');
  if (topK !== undefined) options.topK = integerIn(fn, 'topK', topK, 1, kMaxDimension);
  const topP = own(args, 'topP');
  if (topP !== undefined) {
    options.topP = finiteNumber(fn, 'topP', topP);
    if (!(options.topP > 0 && options.topP <= 1)) fail(fn, `topP must be in (0, 1], got ${topP}`);
  }
  return options;
}

export function generateTokens(
  raw: AttnModule,
  requireMemory: RequireMemory,
  handle: number,
  config: ModelConfig,
  args: GenerateArgs,
): GenerateResult {
  if (typeof args !== 'object' || args === null)
    fail(fn, `expects an object of named arguments, got ${describe(args)}`);
  const prompt = modelTokens(fn, own(args, 'tokens'), config);
  const maxNewTokens = integerIn(fn, 'maxNewTokens', own(args, 'maxNewTokens'), 0, kMaxDimension);
  if (prompt.length + maxNewTokens > config.contextLength) {
    fail(
      fn,
      `tokens (${prompt.length}) + maxNewTokens (${maxNewTokens}) is more than contextLength=${config.contextLength}`,
    );
  }
  const options = samplingOptions(args);
  const seed =
    own(args, 'seed') === undefined ? 0 : integerIn(fn, 'seed', own(args, 'seed'), 0, 2 ** 32 - 1);
  const onToken = own(args, 'onToken');
  if (onToken !== undefined && typeof onToken !== 'function')
    fail(fn, `onToken must be a function, got ${describe(onToken)}`);
  if (maxNewTokens === 0) return { tokens: [] };

  // The last new token is never run, so the cache holds one position fewer.
  const capacity = prompt.length + maxNewTokens - 1;
  const { layers, dModel, vocabSize } = config;
  const cacheBytes = 2 * layers * capacity * dModel * 4;
  const generationBytes = cacheBytes + prompt.length * dModel * 4 * 12 + vocabSize * 4;
  requireMemory(fn, {}, generationBytes, 0, 'generation');
  const call = (runner: string, numbers: Record<string, number>, tokens?: number[]) =>
    callEngine(fn, raw, runner, {
      numbers: { ...numbers, model: handle },
      counts: tokens ? { tokens } : {},
    });
  const random = mulberry32(seed);
  const tokens: number[] = [];
  // Greedy steps find the argmax through an 8-bit copy of the embedding
  // (the core's Gpt2GreedyHead): the same tokens, with a quarter of the bytes
  // read by each step's LM head. Making the copy costs a few steps, so short
  // generations go without it, as do those without memory to spare for it.
  const greedy = (options.temperature ?? 0) === 0 || options.topK === 1;
  // Per token: its row in bytes padded to 16, four doubles for the bound, and each
  // step's integer sum and upper bound.
  const headBytes = vocabSize * (Math.ceil(dModel / 16) * 16 + 4 * 8 + 4 + 8);
  const useHead =
    greedy &&
    maxNewTokens >= kGreedyHeadMinTokens &&
    raw._memory_available() >= generationBytes + headBytes;
  call('gpt2_cache', { capacity, greedy: useHead ? 1 : 0 });
  try {
    // The next token of a step: the core's argmax, or one picked from its logits.
    const next = (stepTokens: number[]) => {
      const out = call('gpt2_step', {}, stepTokens);
      if (typeof out.token === 'number') return out.token;
      return sampleToken((out.logits as CallTensor).data, options, random);
    };
    let token = next(prompt);
    for (let i = 0; i < maxNewTokens; i++) {
      tokens.push(token);
      if (onToken && (onToken as (t: number, i: number) => unknown)(token, i) === false) break;
      if (i + 1 < maxNewTokens) token = next([token]);
    }
  } finally {
    call('gpt2_cache', { capacity: 0 });
  }
  return { tokens };
}
