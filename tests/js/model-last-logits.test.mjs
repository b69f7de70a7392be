// model.forward({ logits: 'last' }): the last position's logits alone, [1, V],
// equal bit for bit to the last row of logits: 'all' — from a whole forward
// (traced and not, with interventions) and with reusePrefix after edits; with
// `hidden` leaving out the final entry (the last block then runs on the last
// row alone) the same bits, and reusePrefix runs whole when a later call asks
// for that entry; in a worker as on the main thread; bad values named, memory
// left as it was.
// scripts/test.sh runs this file on one thread and on the threaded build.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { createAttnScopeWorker } from 'attnscope/worker';
import { engine, engineOptions } from './engine.mjs';
import { assertClose } from './support.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

// V above the LM head's matmul block of 2048 tokens, C a multiple of no batch.
const kConfig = { layers: 2, heads: 2, dModel: 12, vocabSize: 2101, contextLength: 48 };

const tokensOf = (n, salt) => Array.from({ length: n }, (_, i) => (i * 7919 + salt) % 2101);

/** The bits of a Float32Array, to compare exactly (NaN and -0 included). */
const bits = (data) => new Uint32Array(data.buffer, data.byteOffset, data.length);

/** The last row of a [T, V] tensor. */
const lastRow = (t) => t.data.subarray((t.shape[0] - 1) * t.shape[1]);

/** `last` (logits: 'last') against `all`: the last row of its logits, everything else equal. */
function assertLastRow(last, all, what) {
  const V = all.logits.shape[1];
  assert.deepEqual(last.logits.shape, [1, V], `${what}: shape`);
  assert.deepEqual(bits(last.logits.data), bits(lastRow(all.logits)), `${what}: logits`);
  assert.equal(last.attentions?.length, all.attentions?.length);
  for (const [l, a] of (all.attentions ?? []).entries())
    assert.deepEqual(bits(last.attentions[l].data), bits(a.data), `${what}: attentions[${l}]`);
  for (const [l, h] of (all.hidden ?? []).entries())
    assert.deepEqual(bits(last.hidden[l].data), bits(h.data), `${what}: hidden[${l}]`);
  if (all.diff) {
    assert.deepEqual(last.diff.logits.shape, [1, V], `${what}: diff shape`);
    assert.deepEqual(bits(last.diff.logits.data), bits(lastRow(all.diff.logits)), `${what}: diff`);
  }
}

test("logits: 'last' is the last row of every row's logits, bit for bit", () => {
  const model = engine.loadModel(tinyGpt2({ ...kConfig, seed: 21 }).bytes);
  try {
    for (const T of [1, 4, 5, 6, 33]) {
      for (const trace of [true, false]) {
        const tokens = tokensOf(T, 2);
        assertLastRow(
          model.forward({ tokens, trace, logits: 'last' }),
          model.forward({ tokens, trace, logits: 'all' }),
          `T = ${T}${trace ? '' : ', no trace'}`,
        );
      }
    }
    const interventions = { ablate: [{ layer: 1, head: 0, mode: 'mean' }], maskTokens: [2] };
    const tokens = tokensOf(12, 3);
    assertLastRow(
      model.forward({ tokens, interventions, logits: 'last' }),
      model.forward({ tokens, interventions }),
      'with interventions',
    );
  } finally {
    model.dispose();
  }
});

test("logits: 'last' with reusePrefix: the last row after every edit, and 'all' after it", () => {
  const bytes = tinyGpt2({ ...kConfig, seed: 22 }).bytes;
  // The same edits through two models: one asks for every row, one for the last.
  const every = engine.loadModel(bytes);
  const lastOnly = engine.loadModel(bytes);
  try {
    for (const trace of [true, false]) {
      const text = tokensOf(30, 4);
      const edits = [
        text,
        [...text, 9], // appended
        [...text.slice(0, 15), 1, ...text.slice(16), 9], // changed in the middle
        [5, ...text.slice(1, 20)], // changed at the start and cut
      ];
      for (const [i, tokens] of edits.entries()) {
        const all = every.forward({ tokens, trace, reusePrefix: true });
        const last = lastOnly.forward({ tokens, trace, reusePrefix: true, logits: 'last' });
        assertLastRow(last, all, `edit ${i}${trace ? '' : ', no trace'}`);
      }
      // After a run that kept one row, every row is computed again, not taken from it.
      const tokens = [...edits.at(-1), 4];
      const again = lastOnly.forward({ tokens, trace, reusePrefix: true });
      const whole = lastOnly.forward({ tokens, trace });
      assert.deepEqual(again.logits.shape, whole.logits.shape);
      assertClose(again.logits.data, whole.logits.data, { atol: 1e-5, rtol: 1e-5, what: 'all' });
    }
  } finally {
    every.dispose();
    lastOnly.dispose();
  }
});

test("logits: 'last' with hidden leaving out the final entry: the same bits for what is returned", () => {
  // The core then runs the last block's projection and MLP on the last row alone.
  const model = engine.loadModel(tinyGpt2({ ...kConfig, seed: 25 }).bytes);
  try {
    for (const T of [1, 2, 5, 6, 7, 33]) {
      const tokens = tokensOf(T, 6);
      const every = model.forward({ tokens, logits: 'last' });
      for (const hidden of [[0], [1, 0], []]) {
        const some = model.forward({ tokens, logits: 'last', hidden });
        assert.deepEqual(bits(some.logits.data), bits(every.logits.data), `T = ${T}: logits`);
        for (const [l, a] of every.attentions.entries())
          assert.deepEqual(bits(some.attentions[l].data), bits(a.data), `T = ${T}: attentions`);
        assert.deepEqual(
          Object.keys(some.hidden).map(Number),
          [...hidden].sort(),
          `T = ${T}: the entries asked for`,
        );
        for (const l of hidden)
          assert.deepEqual(bits(some.hidden[l].data), bits(every.hidden[l].data), `hidden[${l}]`);
      }
    }
  } finally {
    model.dispose();
  }
});

test('reusePrefix after a run without the final hidden rows runs whole when they are asked for', () => {
  const model = engine.loadModel(tinyGpt2({ ...kConfig, seed: 26 }).bytes);
  const fresh = engine.loadModel(tinyGpt2({ ...kConfig, seed: 26 }).bytes);
  try {
    const text = tokensOf(24, 7);
    const runs = [
      [text, [0]],
      [[...text, 3], 'all'], // the final rows asked for after a run that left them out
      [
        [...text.slice(0, 10), 4, ...text.slice(11), 3],
        [2, 1],
      ], // the final entry asked by index
      [[...text.slice(0, 10), 5, ...text.slice(11), 3], [1]],
      [[...text.slice(0, 10), 5, ...text.slice(11, 20), 6, ...text.slice(21), 3], [0]],
      [[...text.slice(0, 10), 5, ...text.slice(11), 3, 8], 'all'],
    ];
    for (const [i, [tokens, hidden]] of runs.entries()) {
      const got = model.forward({ tokens, reusePrefix: true, logits: 'last', hidden });
      const want = fresh.forward({ tokens, logits: 'last' });
      assertClose(got.logits.data, want.logits.data, { atol: 1e-5, rtol: 1e-5, what: `run ${i}` });
      const entries = hidden === 'all' ? want.hidden.map((_, l) => l) : hidden;
      assert.deepEqual(Object.keys(got.hidden).map(Number), [...entries].sort(), `run ${i}`);
      for (const l of entries) {
        assert.deepEqual(got.hidden[l].shape, want.hidden[l].shape, `run ${i}: hidden[${l}]`);
        assertClose(got.hidden[l].data, want.hidden[l].data, {
          atol: 1e-5,
          what: `run ${i}: hidden[${l}]`,
        });
      }
    }
  } finally {
    model.dispose();
    fresh.dispose();
  }
});

test('bad logits values are AttnScopeErrors naming logits, and memory is left as it was', () => {
  const model = engine.loadModel(tinyGpt2({ seed: 23 }).bytes);
  try {
    model.forward({ tokens: [1, 2], reusePrefix: true, logits: 'last' });
    const before = engine.memoryUsage().heapInUse;
    for (const [logits, shown] of [
      ['first', "'first'"],
      ['LAST', "'LAST'"],
      [1, 'number'],
      [null, 'null'],
      [true, 'boolean'],
    ]) {
      for (const reusePrefix of [false, true]) {
        assert.throws(() => model.forward({ tokens: [1, 2, 3], logits, reusePrefix }), {
          name: 'AttnScopeError',
          message: new RegExp(`^model\\.forward: logits must be 'all' or 'last', got ${shown}`),
        });
      }
    }
    assert.equal(engine.memoryUsage().heapInUse, before);
    const again = model.forward({ tokens: [1, 2, 3], reusePrefix: true, logits: 'last' });
    assertLastRow(again, model.forward({ tokens: [1, 2, 3] }), 'after the errors');
  } finally {
    model.dispose();
  }
});

const worker = createAttnScopeWorker(engineOptions);
after(() => worker.terminate());

test("logits: 'last' in a worker gives the main thread's result, bit for bit", async () => {
  const bytes = tinyGpt2({ ...kConfig, seed: 24 }).bytes;
  const local = engine.loadModel(bytes);
  const remote = await worker.loadModel(bytes);
  try {
    for (const tokens of [tokensOf(20, 5), [...tokensOf(20, 5), 3]]) {
      const args = { tokens, reusePrefix: true, logits: 'last' };
      assert.deepEqual(await remote.forward(args), local.forward(args));
    }
    await assert.rejects(remote.forward({ tokens: [1], logits: 'some' }), {
      name: 'AttnScopeError',
      message: /logits must be 'all' or 'last', got 'some'/,
    });
  } finally {
    local.dispose();
    await remote.dispose();
  }
});
