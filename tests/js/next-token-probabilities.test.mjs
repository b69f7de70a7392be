// The next token's probabilities on the site (web/app/src/gpt2/probabilities.ts): the k most
// likely tokens found in one pass are those a full sort gives, in its order (ties by the
// lower token id), with softmax's probabilities.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { loadTrainModules } from './app-train.mjs';

let probabilities;
before(async () => ({ probabilities } = await loadTrainModules()));

/** The k most likely tokens by sorting every index, and softmax in double precision. */
function bySorting(logits, k) {
  const max = Math.max(...logits);
  const sum = logits.reduce((s, v) => s + Math.exp(v - max), 0);
  return [...logits.keys()]
    .sort((a, b) => logits[b] - logits[a] || a - b)
    .slice(0, k)
    .map((token) => ({ token, p: Math.exp(logits[token] - max) / sum }));
}

test("topTokens gives a full sort's first k, ties by token id", () => {
  let seed = 7;
  const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
  for (const [V, k] of [
    [1, 1],
    [5, 10],
    [100, 10],
    [50257, 10],
    [300, 300],
  ]) {
    // Coarse values so that many tie, large ones so that the softmax needs its max.
    const logits = Float32Array.from({ length: V }, () => Math.round(next() * 40) / 4 + 60);
    const got = probabilities.topTokens(logits, k);
    const want = bySorting(logits, k);
    assert.deepEqual(
      got.map((t) => t.token),
      want.map((t) => t.token),
      `V=${V} k=${k}`,
    );
    for (const [i, t] of got.entries()) {
      assert.ok(Math.abs(t.p - want[i].p) < 1e-12, `V=${V} k=${k}: p of token ${t.token}`);
    }
  }
});

test('probabilities gives softmax at any token, and 0 outside the vocabulary', () => {
  const logits = Float32Array.of(1, 2, 3, 1000);
  const p = probabilities.probabilities(logits);
  const total = [0, 1, 2, 3].reduce((s, t) => s + p(t), 0);
  assert.ok(Math.abs(total - 1) < 1e-12);
  assert.equal(p(3), 1 / (1 + Math.exp(-997) + Math.exp(-998) + Math.exp(-999)));
  assert.equal(p(-1), 0);
  assert.equal(p(4), 0);
});
