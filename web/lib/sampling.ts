// Picking the next token from a model's logits: greedy, or a draw from the
// softmax at a temperature, optionally restricted to the top k tokens and/or
// the nucleus (top p). Computed in double from the float32 logits, with the
// maximum subtracted before exp so that no logit overflows. Ties are broken
// by token id (the lower id first) everywhere, so a given `random` always
// gives the same tokens.
import { AttnScopeError } from './errors.js';

/** How sampleToken picks a token. */
export interface SamplingOptions {
  /** Divides the logits before the softmax; 0 or absent: greedy (the argmax). */
  temperature?: number;
  /** Keep only the k most likely tokens (a positive integer). */
  topK?: number;
  /** Keep only the smallest set of most likely tokens whose probabilities add up to at least p, in (0, 1]. */
  topP?: number;
}

const kOptions = new Set(['temperature', 'topK', 'topP']);

function fail(message: string): never {
  throw new AttnScopeError(`sampleToken: ${message}`);
}

function checkOptions(options: SamplingOptions | undefined): Required<SamplingOptions> {
  if (options === undefined || options === null) return { temperature: 0, topK: Infinity, topP: 1 };
  if (typeof options !== 'object') fail(`options must be an object, got ${typeof options}`);
  for (const key of Object.keys(options)) {
    if (!kOptions.has(key)) fail(`unknown option "${key}" (known: temperature, topK, topP)`);
  }
  const { temperature = 0, topK = Infinity, topP = 1 } = options;
  if (typeof temperature !== 'number' || !(temperature >= 0) || temperature === Infinity) {
    fail(`temperature must be a finite number ≥ 0, got ${String(temperature)}`);
  }
  if (topK !== Infinity && !(Number.isSafeInteger(topK) && topK >= 1)) {
    fail(`topK must be a positive integer, got ${String(topK)}`);
  }
  if (typeof topP !== 'number' || !(topP > 0 && topP <= 1)) {
    fail(`topP must be a number in (0, 1], got ${String(topP)}`);
  }
  return { temperature, topK, topP };
}

/** The index of the largest logit (the lowest such index on ties). */
function argmax(logits: Float32Array): number {
  let best = 0;
  for (let i = 1; i < logits.length; i++) if (logits[i]! > logits[best]!) best = i;
  return best;
}

/**
 * The next token: the argmax of `logits` when the temperature is 0 (or
 * absent), else a draw from softmax(logits / temperature) restricted by topK
 * then topP, using `random()` (a number in [0, 1), called once per draw).
 * A logit of -Infinity is a token that can never be picked.
 */
export function sampleToken(
  logits: Float32Array,
  options: SamplingOptions,
  random: () => number,
): number {
  if (!(logits instanceof Float32Array)) fail('logits must be a Float32Array');
  if (logits.length === 0) fail('logits is empty');
  for (let i = 0; i < logits.length; i++) {
    const value = logits[i]!;
    if (Number.isNaN(value) || value === Infinity) fail(`logits[${i}] is ${value}`);
  }
  const { temperature, topK, topP } = checkOptions(options);
  const best = argmax(logits);
  if (logits[best] === -Infinity) fail('every logit is -Infinity: no token can be picked');
  if (temperature === 0 || topK === 1) return best;
  if (typeof random !== 'function') fail('random must be a function returning numbers in [0, 1)');

  // Unnormalised probabilities exp((logit − max) / temperature), all in (0, 1].
  const top = logits[best]!;
  const weight = (i: number) => Math.exp((logits[i]! - top) / temperature);
  let candidates: number[];
  if (topK === Infinity && topP === 1) {
    candidates = Array.from(logits.keys());
  } else {
    candidates = Array.from(logits.keys())
      .filter((i) => logits[i] !== -Infinity)
      .sort((a, b) => logits[b]! - logits[a]! || a - b)
      .slice(0, topK);
    if (topP < 1) {
      let total = 0;
      for (const i of candidates) total += weight(i);
      let cumulative = 0;
      let kept = 0;
      while (kept < candidates.length && cumulative < topP * total)
        cumulative += weight(candidates[kept++]!);
      candidates = candidates.slice(0, kept);
    }
  }

  const weights = candidates.map(weight);
  const total = weights.reduce((sum, w) => sum + w, 0);
  const u = random();
  if (typeof u !== 'number' || !(u >= 0 && u < 1))
    fail(`random() returned ${String(u)}, expected [0, 1)`);
  const target = u * total;
  let cumulative = 0;
  let last = best;
  for (let n = 0; n < candidates.length; n++) {
    if (weights[n]! === 0) continue;
    cumulative += weights[n]!;
    last = candidates[n]!;
    if (target < cumulative) return last;
  }
  return last; // u·total rounded up to the full sum
}
