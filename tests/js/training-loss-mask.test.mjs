// trainer.step's lossMask: the loss is the mean cross-entropy of the selected predictions
// (checked against the model's own logits); one selected prediction trains as in that
// prefix alone, whatever the other sequence and the later tokens hold; all ones is no mask, bit for bit, as a Uint8Array or an array; the worker gives
// the main thread's bits; a bad mask is rejected by name, the trainer stays usable and
// memory is as it was.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import { createAttnScopeWorker } from 'attnscope/worker';
import { engine, engineOptions } from './engine.mjs';

const config = { layers: 2, heads: 2, dModel: 16, vocabSize: 11, contextLength: 9 };
const options = { lr: 1e-2, clip: 1, weightDecay: 0.01 };
// Two sequences of T = 8: seven predictions each.
const tokens = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3, 5, 8, 9, 7, 9, 3];
const shape = [2, 8];

const worker = createAttnScopeWorker(engineOptions);
after(() => worker.terminate());

/** −log softmax(row)[target], in double. */
function crossEntropy(row, target) {
  const max = Math.max(...row);
  const sum = row.reduce((s, z) => s + Math.exp(z - max), 0);
  return Math.log(sum) + max - row[target];
}

function withModel(seed, f) {
  const model = engine.createModel({ ...config, seed });
  try {
    return f(model);
  } finally {
    model.dispose();
  }
}

test('lossMask: the loss is the mean cross-entropy of the selected predictions', () => {
  // Sequence 0 counts predictions 2 and 5, sequence 1 predictions 0 and 6.
  const lossMask = Uint8Array.from([0, 0, 1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1]);
  withModel(3, (model) => {
    let want = 0;
    for (const [b, t] of [
      [0, 2],
      [0, 5],
      [1, 0],
      [1, 6],
    ]) {
      const sequence = tokens.slice(b * 8, b * 8 + 7);
      const logits = model.forward({ tokens: sequence, trace: false }).logits.data;
      const row = Array.from(logits.subarray(t * 11, (t + 1) * 11));
      want += crossEntropy(row, tokens[b * 8 + t + 1]) / 4;
    }
    const { loss } = model.trainer(options).step({ tokens, shape, lossMask });
    assert.ok(Math.abs(loss - want) < 1e-5 * want, `loss ${loss}, expected ${want}`);
  });
});

test('lossMask: one selected prediction trains as in the prefix that makes it, alone', () => {
  // Prediction 4 of sequence 1: tokens 5, 3, 5, 8, 9 → 7.
  const lossMask = new Array(14).fill(0);
  lossMask[7 + 4] = 1;
  const name = 'h.0.attn.c_attn.weight';
  const masked = withModel(5, (model) => {
    const trainer = model.trainer(options);
    return { loss: trainer.step({ tokens, shape, lossMask }).loss, g: trainer.gradient(name) };
  });
  const prefix = withModel(5, (model) => {
    const trainer = model.trainer(options);
    const r = trainer.step({
      tokens: tokens.slice(8, 14),
      shape: [1, 6],
      lossMask: [0, 0, 0, 0, 1],
    });
    return { loss: r.loss, g: trainer.gradient(name) };
  });
  assert.ok(Math.abs(masked.loss - prefix.loss) < 1e-6 * prefix.loss);
  const scale = Math.max(...prefix.g.data.map(Math.abs));
  assert.ok(scale > 0);
  prefix.g.data.forEach((x, i) =>
    assert.ok(Math.abs(masked.g.data[i] - x) < 1e-5 * scale, `${name}[${i}]`),
  );
});

test('lossMask: all ones is the same as no mask, bit for bit', () => {
  const run = (lossMask) =>
    withModel(7, (model) => {
      const trainer = model.trainer(options);
      const losses = [];
      for (let s = 0; s < 3; s++) losses.push(trainer.step({ tokens, shape, lossMask }).loss);
      return { losses, saved: model.save() };
    });
  const none = run(undefined);
  assert.deepEqual(run(new Uint8Array(14).fill(1)), none);
  assert.deepEqual(run(new Array(14).fill(1)), none);
  assert.notDeepEqual(run([1, ...new Array(13).fill(0)]).losses, none.losses);
});

test('lossMask: the worker trains as the main thread, bit for bit', async () => {
  const lossMask = Uint8Array.from({ length: 14 }, (_, i) => i % 3 === 0);
  const local = engine.createModel({ ...config, seed: 2 });
  const remote = await worker.createModel({ ...config, seed: 2 });
  const localTrainer = local.trainer(options);
  const remoteTrainer = await remote.trainer(options);
  for (let s = 0; s < 3; s++)
    assert.deepEqual(
      await remoteTrainer.step({ tokens, shape, lossMask }),
      localTrainer.step({ tokens, shape, lossMask }),
    );
  assert.deepEqual(await remote.save(), local.save());
  local.dispose();
  await remote.dispose();
});

test('a bad lossMask is rejected by name; the trainer stays usable and memory as it was', async () => {
  const before = engine.memoryUsage().heapInUse;
  const throwsNamed = (f, pattern) =>
    assert.throws(f, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  withModel(1, (model) => {
    const trainer = model.trainer(options);
    const step = (lossMask) => () => trainer.step({ tokens, shape, lossMask });
    throwsNamed(
      step(new Uint8Array(16).fill(1)),
      /^trainer.step: lossMask has 16 entries, expected B·\(T − 1\) = 2·7 = 14$/,
    );
    throwsNamed(
      step([1, 0, 2, ...new Array(11).fill(0)]),
      /^trainer.step: lossMask\[2\] is 2, expected 0 or 1$/,
    );
    throwsNamed(
      step([1, true, ...new Array(12).fill(0)]),
      /^trainer.step: lossMask\[1\] is boolean, expected 0 or 1$/,
    );
    throwsNamed(step(new Uint8Array(14)), /^trainer.step: lossMask selects no prediction/);
    throwsNamed(
      step('all'),
      /^trainer.step: lossMask must be a Uint8Array or an array of 0s and 1s/,
    );
    throwsNamed(step(new Float32Array(14).fill(1)), /^trainer.step: lossMask must be/);
    assert.equal(trainer.steps, 0);
    assert.equal(
      typeof trainer.step({ tokens, shape, lossMask: new Uint8Array(14).fill(1) }).loss,
      'number',
    );
    assert.equal(trainer.steps, 1);
  });
  assert.equal(engine.memoryUsage().heapInUse, before);
  const model = await worker.createModel({ ...config, seed: 1 });
  const trainer = await model.trainer(options);
  await assert.rejects(trainer.step({ tokens, shape, lossMask: new Uint8Array(14) }), {
    name: 'AttnScopeError',
    message: /^trainer.step: lossMask selects no prediction/,
  });
  assert.equal(trainer.steps, 0);
  await model.dispose();
});
