// model.forward's attribution (attention rollout, value-norm weighted
// attention) and logit lens against their double-precision references
// (attnscope/reference), with and without interventions.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  attentionRolloutReference,
  gpt2ForwardReference,
  logitLensReference,
  valueNormsReference,
} from 'attnscope/reference';
import { engine } from './engine.mjs';
import { assertClose } from './support.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const tiny = tinyGpt2({
  layers: 3,
  heads: 4,
  dModel: 16,
  vocabSize: 29,
  contextLength: 20,
  seed: 9,
});
const { layers, heads, vocabSize } = tiny.config;
const tokens = [7, 3, 3, 11, 0, 28, 5, 14, 2, 9, 21];
const T = tokens.length;
const model = engine.loadModel(tiny.bytes);

for (const interventions of [undefined, { ablate: [{ layer: 0, head: 2 }], maskTokens: [1] }]) {
  test(`rollout and value norms match the double reference${interventions ? ' (with interventions)' : ''}`, () => {
    const got = model.forward({ tokens, attribution: true, interventions });
    const run = gpt2ForwardReference(tiny.weights, tiny.config, tokens, interventions);
    const rollout = attentionRolloutReference(run.attentions, heads, T);
    const valueNorms = valueNormsReference(tiny.weights, tiny.config, run);
    assert.equal(got.attribution.rollout.length, layers);
    assert.equal(got.attribution.valueNorms.length, layers);
    for (let l = 0; l < layers; l++) {
      assert.deepEqual(got.attribution.rollout[l].shape, [T, T]);
      assert.deepEqual(got.attribution.valueNorms[l].shape, [heads, T, T]);
      assertClose(got.attribution.rollout[l].data, rollout[l], {
        atol: 1e-6,
        what: `rollout[${l}]`,
      });
      assertClose(got.attribution.valueNorms[l].data, valueNorms[l], {
        atol: 1e-5,
        rtol: 1e-5,
        what: `valueNorms[${l}]`,
      });
    }
    // Rollout rows stay distributions; the last layer's differs from the first's.
    const last = got.attribution.rollout[layers - 1].data;
    for (let i = 0; i < T; i++) {
      const sum = last.subarray(i * T, (i + 1) * T).reduce((a, b) => a + b, 0);
      assert.ok(Math.abs(sum - 1) < 1e-5, `row ${i} sums to ${sum}`);
    }
    assert.ok(last.some((x, i) => Math.abs(x - got.attribution.rollout[0].data[i]) > 1e-3));
  });
}

test('attribution and logitLens are absent unless asked for', () => {
  const got = model.forward({ tokens });
  assert.equal(got.attribution, undefined);
  assert.equal(got.logitLens, undefined);
});

test('the logit lens gives the reference top tokens per layer, and the last layer is the model own', () => {
  const topK = 4;
  const got = model.forward({ tokens, logitLens: { topK } });
  const run = gpt2ForwardReference(tiny.weights, tiny.config, tokens);
  const probabilities = logitLensReference(tiny.weights, tiny.config, run);
  assert.deepEqual(got.logitLens.ids.shape, [layers, T, topK]);
  assert.deepEqual(got.logitLens.probabilities.shape, [layers, T, topK]);
  assert.ok(got.logitLens.ids.data instanceof Int32Array);
  for (let l = 0; l < layers; l++) {
    for (let t = 0; t < T; t++) {
      const want = probabilities[l].subarray(t * vocabSize, (t + 1) * vocabSize);
      const order = [...want.keys()].sort((a, b) => want[b] - want[a] || a - b);
      for (let r = 0; r < topK; r++) {
        const at = (l * T + t) * topK + r;
        const id = got.logitLens.ids.data[at];
        assert.ok(
          Math.abs(want[id] - want[order[r]]) < 1e-6,
          `layer ${l} position ${t} rank ${r}: ${id} vs ${order[r]}`,
        );
        assert.ok(Math.abs(got.logitLens.probabilities.data[at] - want[id]) < 1e-5);
      }
    }
  }
  // The last layer: the model's own logits, softmaxed, ranked.
  const logits = got.logits.data;
  for (let t = 0; t < T; t++) {
    const row = logits.subarray(t * vocabSize, (t + 1) * vocabSize);
    const order = [...row.keys()].sort((a, b) => row[b] - row[a] || a - b);
    const max = row[order[0]];
    const sum = row.reduce((s, x) => s + Math.exp(x - max), 0);
    for (let r = 0; r < topK; r++) {
      const at = ((layers - 1) * T + t) * topK + r;
      assert.equal(got.logitLens.ids.data[at], order[r]);
      assert.ok(
        Math.abs(got.logitLens.probabilities.data[at] - Math.exp(row[order[r]] - max) / sum) < 1e-6,
      );
    }
  }
});

test('logitLens topK defaults to 5', () => {
  assert.deepEqual(model.forward({ tokens, logitLens: {} }).logitLens.ids.shape, [layers, T, 5]);
});
