// model.forward({ reusePrefix: true }): after each edit of a sequence (a
// token appended, one changed in the middle, the end cut, the same tokens
// again, the first changed, then the first and a late one at the same
// length, where the kept rows are rewritten in place) the result is a whole
// forward's, shapes and values; after a training step the kept keys and
// values are not reused; bad combinations are named; the caller may change
// the arrays it got.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import { assertClose } from './support.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const edits = [
  [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7],
  [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9], // appended
  [3, 1, 4, 1, 5, 0, 2, 6, 5, 3, 5, 8, 9, 7, 9], // changed at 5
  [3, 1, 4, 1, 5, 0, 2, 6], // cut
  [3, 1, 4, 1, 5, 0, 2, 6], // the same again
  [10, 1, 4, 1, 5, 0, 2, 6, 2], // changed at 0
  [7, 1, 4, 1, 5, 0, 2, 6, 2], // changed at 0, the same length (the kept rows rewritten in place)
  [7, 1, 4, 1, 5, 0, 2, 7, 2], // changed at 7, the same length
];

/** The reused result against a whole forward: same shapes, same values. */
function assertSameAsWhole(got, want, what) {
  assert.deepEqual(got.logits.shape, want.logits.shape);
  assertClose(got.logits.data, want.logits.data, {
    atol: 1e-5,
    rtol: 1e-5,
    what: `${what} logits`,
  });
  assert.equal(got.attentions?.length, want.attentions?.length);
  for (const [l, a] of (want.attentions ?? []).entries()) {
    assert.deepEqual(got.attentions[l].shape, a.shape);
    assertClose(got.attentions[l].data, a.data, { atol: 1e-6, what: `${what} attentions[${l}]` });
  }
  for (const [l, h] of (want.hidden ?? []).entries()) {
    assert.deepEqual(got.hidden[l].shape, h.shape);
    assertClose(got.hidden[l].data, h.data, { atol: 1e-5, what: `${what} hidden[${l}]` });
  }
}

for (const trace of [true, false]) {
  test(`reusePrefix${trace ? '' : ' without trace'} gives a whole forward after every edit`, () => {
    const model = engine.loadModel(tinyGpt2({ seed: 12, contextLength: 32 }).bytes);
    try {
      for (const [i, tokens] of edits.entries()) {
        const got = model.forward({ tokens, trace, reusePrefix: true });
        assertSameAsWhole(got, model.forward({ tokens, trace }), `edit ${i}`);
        // The caller owns what it got: changing it must not reach the next result.
        got.logits.data.fill(NaN);
        for (const t of [...(got.attentions ?? []), ...(got.hidden ?? [])]) t.data.fill(NaN);
      }
    } finally {
      model.dispose();
    }
  });
}

test('reusePrefix after a trace-less run, and after a training step, recomputes what changed', () => {
  const model = engine.createModel({
    layers: 2,
    heads: 2,
    dModel: 8,
    vocabSize: 11,
    contextLength: 16,
    seed: 3,
  });
  try {
    const tokens = [1, 2, 3, 4, 5, 6];
    model.forward({ tokens, trace: false, reusePrefix: true });
    const traced = model.forward({ tokens, trace: true, reusePrefix: true });
    assertSameAsWhole(traced, model.forward({ tokens }), 'traced after trace-less');
    const trainer = model.trainer({ lr: 0.05 });
    trainer.step({ tokens: [1, 2, 3, 4, 5, 6, 7, 8], shape: [1, 8] });
    const after = model.forward({ tokens, reusePrefix: true });
    const whole = model.forward({ tokens });
    assertSameAsWhole(after, whole, 'after a training step');
    assert.notDeepEqual(after.logits.data, traced.logits.data);
  } finally {
    model.dispose();
  }
});

test('reusePrefix is checked, naming the argument, and memory is left as it was', () => {
  const model = engine.loadModel(tinyGpt2({ seed: 2 }).bytes);
  try {
    model.forward({ tokens: [1, 2], reusePrefix: true });
    const before = engine.memoryUsage().heapInUse;
    for (const [args, message] of [
      [{ tokens: [1], reusePrefix: 'yes' }, /reusePrefix must be a boolean/],
      [
        { tokens: [1, 2], reusePrefix: true, interventions: { maskTokens: [0] } },
        /reusePrefix runs plain forwards only/,
      ],
      [{ tokens: [1, 2], reusePrefix: true, attribution: true }, /reusePrefix/],
      [{ tokens: [1, 99], reusePrefix: true }, /tokens\[1\] is 99/],
    ]) {
      assert.throws(() => model.forward(args), { name: 'AttnScopeError', message });
    }
    assert.equal(engine.memoryUsage().heapInUse, before);
    const again = model.forward({ tokens: [1, 2, 3], reusePrefix: true });
    assertSameAsWhole(again, model.forward({ tokens: [1, 2, 3] }), 'after the errors');
  } finally {
    model.dispose();
  }
});

test('hidden picks the residual stream entries returned, with or without reusePrefix', () => {
  const model = engine.loadModel(tinyGpt2({ seed: 5, contextLength: 32 }).bytes);
  try {
    const { layers } = model.config;
    const whole = model.forward({ tokens: edits[0] });
    for (const [i, tokens] of edits.entries()) {
      const want = model.forward({ tokens });
      for (const reusePrefix of [true, false]) {
        const got = model.forward({ tokens, reusePrefix, hidden: [1, layers], logits: 'last' });
        const what = `edit ${i}, reusePrefix ${reusePrefix}`;
        assert.equal(got.hidden.length, layers + 1, what);
        assert.deepEqual(Object.keys(got.hidden), ['1', String(layers)], what);
        for (const l of [1, layers]) {
          assertClose(got.hidden[l].data, want.hidden[l].data, { atol: 1e-5, what });
        }
        assert.equal(got.attentions.length, layers, what);
      }
    }
    const all = model.forward({ tokens: edits[0], hidden: 'all' });
    assert.equal(Object.keys(all.hidden).length, whole.hidden.length);
    const before = engine.memoryUsage().heapInUse;
    for (const [args, message] of [
      [{ hidden: [layers + 1] }, /hidden\[0\]/],
      [{ hidden: [0, -1] }, /hidden\[1\]/],
      [{ hidden: [0.5] }, /hidden\[0\]/],
      [{ hidden: 3 }, /hidden must be 'all' or an array/],
      [{ hidden: 'some' }, /hidden must be 'all' or an array/],
      [{ hidden: [0], trace: false }, /hidden needs trace/],
    ]) {
      assert.throws(() => model.forward({ tokens: [1, 2], ...args }), {
        name: 'AttnScopeError',
        message,
      });
    }
    assert.equal(engine.memoryUsage().heapInUse, before);
  } finally {
    model.dispose();
  }
});
