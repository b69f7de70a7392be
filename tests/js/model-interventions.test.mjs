// model.forward's interventions (ablate, maskTokens, replace) and their
// diff against the clean run, checked against the double-precision
// reference run with the same interventions; the identities that pin their
// meaning down (a head given its own pattern is the clean run bit for bit,
// a layer with every head ablated is the layer without its heads).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { gpt2ForwardReference } from 'attnscope/reference';
import { engine } from './engine.mjs';
import { assertClose } from './support.mjs';
import { safetensorsFile, tinyGpt2 } from './support-gpt2.mjs';

const tiny = tinyGpt2({
  layers: 3,
  heads: 2,
  dModel: 8,
  vocabSize: 13,
  contextLength: 16,
  seed: 5,
});
const tokens = [3, 1, 4, 1, 5, 9, 2, 6, 5];
const T = tokens.length;
const model = engine.loadModel(tiny.bytes);
const clean = model.forward({ tokens, trace: true });
const cleanReference = gpt2ForwardReference(tiny.weights, tiny.config, tokens);

const subtract = (a, b) => Float64Array.from(a, (x, i) => x - b[i]);

const interventionCases = [
  ['zero ablation of one head', { ablate: [{ layer: 1, head: 0, mode: 'zero' }] }],
  ['mean ablation of one head', { ablate: [{ layer: 0, head: 1, mode: 'mean' }] }],
  ['ablation with the default mode', { ablate: [{ layer: 2, head: 1 }] }],
  ['a masked token', { maskTokens: [2] }],
  ['masking the first token (query 0 keeps itself)', { maskTokens: [0, 4] }],
  [
    'a pattern from another head of the same layer',
    { replace: [{ layer: 1, head: 0, from: { layer: 1, head: 1 } }] },
  ],
  [
    'a pattern from a later layer',
    { replace: [{ layer: 0, head: 1, from: { layer: 2, head: 0 } }] },
  ],
  [
    'all three together',
    {
      ablate: [{ layer: 2, head: 0, mode: 'mean' }],
      maskTokens: [1],
      replace: [{ layer: 1, head: 1, from: { layer: 0, head: 0 } }],
    },
  ],
];

for (const [what, interventions] of interventionCases) {
  test(`${what}: the run and its diff match the reference with the same interventions`, () => {
    const want = gpt2ForwardReference(tiny.weights, tiny.config, tokens, interventions);
    for (const trace of [true, false]) {
      const got = model.forward({ tokens, trace, interventions });
      const tol = { atol: 1e-5, rtol: 1e-5 };
      assertClose(got.logits.data, want.logits, { ...tol, what: `logits (trace ${trace})` });
      assertClose(got.diff.logits.data, subtract(want.logits, cleanReference.logits), {
        ...tol,
        what: `diff.logits (trace ${trace})`,
      });
      assert.deepEqual(got.diff.logits.shape, [T, tiny.config.vocabSize]);
      if (!trace) {
        assert.equal(got.diff.attentions, undefined);
        continue;
      }
      for (let l = 0; l < tiny.config.layers; l++) {
        assertClose(got.attentions[l].data, want.attentions[l], {
          atol: 1e-6,
          what: `attentions[${l}]`,
        });
        assertClose(
          got.diff.attentions[l].data,
          subtract(want.attentions[l], cleanReference.attentions[l]),
          { atol: 1e-6, what: `diff.attentions[${l}]` },
        );
      }
    }
  });
}

test('the diff is not zero when something changes (the comparison can fail)', () => {
  const got = model.forward({ tokens, interventions: { ablate: [{ layer: 0, head: 0 }] } });
  assert.ok(got.diff.logits.data.some((x) => Math.abs(x) > 1e-3));
  assert.ok(got.diff.attentions[1].data.some((x) => Math.abs(x) > 1e-4));
  assert.ok(
    got.diff.attentions[0].data.every((x) => x === 0),
    'the ablated layer keeps its weights',
  );
});

test('a masked key gets weight 0 from every other query, and a query left alone attends to itself', () => {
  const got = model.forward({ tokens, interventions: { maskTokens: [0, 3] } });
  for (const a of got.attentions) {
    for (let h = 0; h < tiny.config.heads; h++) {
      for (let i = 0; i < T; i++) {
        const row = a.data.subarray((h * T + i) * T, (h * T + i + 1) * T);
        if (i !== 0) assert.equal(row[0], 0);
        if (i !== 3) assert.equal(row[3], 0);
      }
      assert.equal(a.data[h * T * T], 1, 'query 0 sees only itself');
    }
  }
});

test('replacing each head by its own pattern gives the clean run bit for bit', () => {
  for (let layer = 0; layer < tiny.config.layers; layer++) {
    for (let head = 0; head < tiny.config.heads; head++) {
      const got = model.forward({
        tokens,
        interventions: { replace: [{ layer, head, from: { layer, head } }] },
      });
      assert.deepEqual(got.logits.data, clean.logits.data, `layer ${layer} head ${head}`);
      got.attentions.forEach((a, l) => assert.deepEqual(a.data, clean.attentions[l].data));
      assert.ok(got.diff.logits.data.every((x) => x === 0));
    }
  }
});

test('no interventions, or none listed, is the clean run bit for bit and reports no diff', () => {
  for (const interventions of [undefined, {}, { maskTokens: [] }, { ablate: [], replace: [] }]) {
    const got = model.forward({ tokens, interventions });
    assert.deepEqual(got.logits.data, clean.logits.data);
    assert.equal(got.diff, undefined);
  }
});

test('ablating every head of a layer equals a model whose layer has no head output (c_proj.weight zero)', () => {
  for (let layer = 0; layer < tiny.config.layers; layer++) {
    const entries = [...tiny.weights].map(([name, { data, shape }]) => {
      const held = Float32Array.from(data);
      if (name === `h.${layer}.attn.c_proj.weight`) held.fill(0);
      return [name, 'F32', shape, new Uint8Array(held.buffer)];
    });
    const without = engine.loadModel(safetensorsFile(entries, { n_head: '2' }));
    try {
      const ablate = [0, 1].map((head) => ({ layer, head, mode: 'zero' }));
      const got = model.forward({ tokens, interventions: { ablate } });
      const want = without.forward({ tokens });
      assert.deepEqual(got.logits.data, want.logits.data, `layer ${layer}`);
      assert.ok(got.diff.logits.data.some((x) => x !== 0));
    } finally {
      without.dispose();
    }
  }
});
