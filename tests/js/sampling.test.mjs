// sampleToken (web/lib/sampling.ts): greedy is the argmax, and seeded draws
// follow softmax(logits / temperature) restricted by topK and topP, checked
// by counting many draws against the expected probabilities.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import { mulberry32 } from 'attnscope/reference';
import { sampleToken } from '../../dist/sampling.js';
import { rng } from './support.mjs';

const kDraws = 40000;

/** Frequencies of each token over kDraws seeded draws. */
function frequencies(logits, options, seed = 1) {
  const random = mulberry32(seed);
  const counts = new Array(logits.length).fill(0);
  for (let n = 0; n < kDraws; n++) counts[sampleToken(logits, options, random)]++;
  return counts.map((c) => c / kDraws);
}

/** Each frequency within 4.5 standard deviations of its probability (and exactly 0 where p = 0). */
function assertFollows(freq, probabilities, what) {
  probabilities.forEach((p, i) => {
    if (p === 0) return assert.equal(freq[i], 0, `${what}: token ${i} drawn with probability 0`);
    const sd = Math.sqrt((p * (1 - p)) / kDraws);
    assert.ok(
      Math.abs(freq[i] - p) <= 4.5 * sd,
      `${what}: token ${i} drawn ${freq[i]}, expected ${p}`,
    );
  });
}

const probs = [0.1, 0.2, 0.3, 0.4];
const logits = Float32Array.from(probs, Math.log);
const normalised = (ws) => ws.map((w) => w / ws.reduce((a, b) => a + b, 0));

test('sampleToken: greedy (temperature 0 or absent) is the argmax, the lowest id on ties', () => {
  const r = rng(3);
  for (let n = 0; n < 200; n++) {
    const l = r.floats(r.int(1, 60), -10, 10);
    const expected = l.indexOf(Math.max(...l));
    assert.equal(sampleToken(l, {}, null), expected);
    assert.equal(sampleToken(l, { temperature: 0 }, null), expected);
    assert.equal(sampleToken(l, undefined, null), expected);
    assert.equal(sampleToken(l, { temperature: 0.7, topK: 1 }, Math.random), expected, 'topK = 1');
  }
  assert.equal(sampleToken(Float32Array.of(1, 5, 5, -Infinity), {}, null), 1);
  assert.equal(sampleToken(Float32Array.of(-Infinity, -Infinity, -3), {}, null), 2);
});

test('sampleToken: draws follow softmax(logits / temperature)', () => {
  assertFollows(frequencies(logits, { temperature: 1 }), probs, 'T = 1');
  assertFollows(
    frequencies(logits, { temperature: 2 }, 2),
    normalised(probs.map(Math.sqrt)),
    'T = 2',
  );
  assertFollows(
    frequencies(logits, { temperature: 0.5 }, 3),
    normalised(probs.map((p) => p * p)),
    'T = 0.5',
  );
  // A token at -Infinity is never drawn; the rest keep their proportions.
  const masked = Float32Array.of(Math.log(0.1), -Infinity, Math.log(0.3), Math.log(0.4));
  assertFollows(frequencies(masked, { temperature: 1 }, 4), [0.125, 0, 0.375, 0.5], 'masked');
  // A wrong temperature handling (e.g. multiplying) is told apart by these counts.
  assert.throws(() =>
    assertFollows(frequencies(logits, { temperature: 1 }), normalised(probs.map(Math.sqrt)), 'x'),
  );
});

test('sampleToken: topK keeps the k most likely tokens, renormalised', () => {
  assertFollows(
    frequencies(logits, { temperature: 1, topK: 2 }, 5),
    [0, 0, 3 / 7, 4 / 7],
    'topK 2',
  );
  assertFollows(frequencies(logits, { temperature: 1, topK: 10 }, 6), probs, 'topK above V');
  // Ties at the cut keep the lower ids.
  const flat = new Float32Array(4);
  assertFollows(frequencies(flat, { temperature: 1, topK: 2 }, 7), [0.5, 0.5, 0, 0], 'tied');
});

test('sampleToken: topP keeps the smallest most likely set reaching p', () => {
  const cases = [
    [0.3, [0, 0, 0, 1]],
    [0.35, [0, 0, 0, 1]],
    [0.45, [0, 0, 3 / 7, 4 / 7]],
    [0.65, [0, 0, 3 / 7, 4 / 7]],
    [0.75, [0, 2 / 9, 3 / 9, 4 / 9]],
    [1, probs],
  ];
  for (const [topP, expected] of cases) {
    assertFollows(frequencies(logits, { temperature: 1, topP }, 8), expected, `topP ${topP}`);
  }
  // The nucleus is taken from the tempered distribution: at T = 0.5, 0.4² / 0.3 = 0.53 ≥ 0.5.
  assertFollows(frequencies(logits, { temperature: 0.5, topP: 0.5 }, 9), [0, 0, 0, 1], 'tempered');
  // Ties: the lower ids first.
  const flat = new Float32Array(4);
  assertFollows(frequencies(flat, { temperature: 1, topP: 0.5 }, 10), [0.5, 0.5, 0, 0], 'tied');
  // topK first, then topP within it.
  assertFollows(
    frequencies(logits, { temperature: 1, topK: 3, topP: 0.5 }, 11),
    [0, 0, 3 / 7, 4 / 7],
    'topK 3 + topP 0.5',
  );
});

test('sampleToken: stable on huge logits and deterministic for a seed', () => {
  const huge = Float32Array.of(3.4e38, -3.4e38, 3.3e38);
  for (let n = 0; n < 100; n++) assert.equal(sampleToken(huge, { temperature: 1 }, Math.random), 0);
  const near = Float32Array.of(3.4e38, 3.4e38);
  assertFollows(frequencies(near, { temperature: 0.01 }, 12), [0.5, 0.5], 'equal huge logits');
  const l = rng(4).floats(50, -3, 3);
  const draw = (seed) => {
    const random = mulberry32(seed);
    return Array.from({ length: 30 }, () =>
      sampleToken(l, { temperature: 0.9, topP: 0.9 }, random),
    );
  };
  assert.deepEqual(draw(5), draw(5));
  assert.notDeepEqual(draw(5), draw(6));
});

test('sampleToken: bad logits, options and random are refused, naming them', () => {
  const refuses = (args, pattern) =>
    assert.throws(
      () => sampleToken(...args),
      (e) => e instanceof AttnScopeError && pattern.test(e.message),
    );
  const r = () => 0.5;
  refuses([new Float32Array(0), {}, r], /logits is empty/);
  refuses([Float32Array.of(1, NaN), {}, r], /logits\[1\] is NaN/);
  refuses([Float32Array.of(Infinity), {}, r], /logits\[0\] is Infinity/);
  refuses([[1, 2], {}, r], /logits must be a Float32Array/);
  refuses([Float32Array.of(-Infinity, -Infinity), {}, r], /every logit is -Infinity/);
  for (const temperature of [-1, NaN, Infinity, '1', null]) {
    refuses([logits, { temperature }, r], /temperature must be a finite number ≥ 0, got/);
  }
  for (const topK of [0, -1, 1.5, '2', NaN, null]) {
    refuses([logits, { temperature: 1, topK }, r], /topK must be a positive integer, got/);
  }
  for (const topP of [0, -0.1, 1.5, NaN, '0.5', null]) {
    refuses([logits, { temperature: 1, topP }, r], /topP must be a number in \(0, 1\], got/);
  }
  refuses([logits, { top_k: 3 }, r], /unknown option "top_k"/);
  refuses([logits, 'greedy', r], /options must be an object/);
  refuses([logits, { temperature: 1 }, undefined], /random must be a function/);
  refuses([logits, { temperature: 1 }, () => 1], /random\(\) returned 1, expected \[0, 1\)/);
  refuses([logits, { temperature: 1 }, () => NaN], /random\(\) returned NaN/);
});
