// Models in the worker (attnscope/worker, Node flavour): loadModel returns a
// proxy whose methods give what the same model gives on the main thread.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { createAttnScopeWorker } from 'attnscope/worker';
import { engine, engineOptions } from './engine.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const worker = createAttnScopeWorker(engineOptions);
after(() => worker.terminate());

test('a model in the worker runs, generates and saves as on the main thread, bit for bit', async () => {
  const tiny = tinyGpt2({ dtype: 'F16', prefix: 'transformer.', seed: 6 });
  const local = engine.loadModel(tiny.bytes);
  const remote = await worker.loadModel(tiny.bytes);
  assert.deepEqual(remote.config, local.config);
  const tokens = [1, 5, 2, 7];
  assert.deepEqual(await remote.forward({ tokens }), local.forward({ tokens }));
  assert.deepEqual(
    await remote.forward({ tokens, trace: false }),
    local.forward({ tokens, trace: false }),
  );
  const args = { tokens, maxNewTokens: 6, temperature: 0.8, topK: 5, seed: 3 };
  assert.deepEqual(await remote.generate(args), local.generate(args));
  assert.deepEqual(await remote.save(), local.save());
  local.dispose();
  await remote.dispose();
  await assert.rejects(remote.forward({ tokens }), {
    name: 'AttnScopeError',
    message: /the model was disposed/,
  });
});

test('a bad file rejects with the engine message, and the worker frees everything', async () => {
  const before = await worker.memoryUsage();
  await assert.rejects(worker.loadModel(tinyGpt2().bytes, { config: { heads: 3 } }), {
    name: 'AttnScopeError',
    message: /heads=3 does not divide dModel=8/,
  });
  const bytes = tinyGpt2({ seed: 8 }).bytes;
  const model = await worker.loadModel(bytes, undefined, [bytes.buffer]);
  assert.equal(bytes.length, 0, 'the file moved to the worker');
  await model.dispose();
  assert.equal((await worker.memoryUsage()).heapInUse, before.heapInUse);
});

test('a model created in the worker trains as on the main thread, bit for bit', async () => {
  const config = { layers: 2, heads: 2, dModel: 16, vocabSize: 20, contextLength: 12, seed: 4 };
  const local = engine.createModel(config);
  const remote = await worker.createModel(config);
  assert.deepEqual(remote.config, local.config);
  const options = { lr: 3e-3, weightDecay: 0.1, clip: 1, warmup: 2, totalSteps: 6 };
  const localTrainer = local.trainer(options);
  const remoteTrainer = await remote.trainer(options);
  assert.equal(remoteTrainer.steps, 0);
  for (let step = 0; step < 4; step++) {
    const batch = {
      tokens: Array.from({ length: 3 * 9 }, (_, i) => (i * 7 + step * 3) % 20),
      shape: [3, 9],
    };
    assert.deepEqual(await remoteTrainer.step(batch), localTrainer.step(batch), `step ${step}`);
  }
  assert.equal(remoteTrainer.steps, 4);
  const name = 'h.1.attn.c_attn.weight';
  assert.deepEqual(await remoteTrainer.gradient(name), localTrainer.gradient(name));
  assert.deepEqual(await remote.save(), local.save());
  local.dispose();
  await remote.dispose();
  await assert.rejects(remoteTrainer.step({ tokens: [1, 2], shape: [1, 2] }), {
    name: 'AttnScopeError',
    message: /trainer.step: the trainer's model was disposed/,
  });
});

test('bad model and trainer options reject with the engine message, and the worker frees everything', async () => {
  const before = await worker.memoryUsage();
  const bad = { layers: 1, heads: 3, dModel: 16, vocabSize: 20, contextLength: 8 };
  const message = (() => {
    try {
      engine.createModel(bad);
    } catch (e) {
      return e.message;
    }
    return 'no error';
  })();
  await assert.rejects(worker.createModel(bad), { name: 'AttnScopeError', message });
  const model = await worker.createModel({ ...bad, heads: 2 });
  await assert.rejects(model.trainer({ lr: -1 }), { name: 'AttnScopeError', message: /lr/ });
  const trainer = await model.trainer({ lr: 1e-3 });
  await assert.rejects(trainer.step({ tokens: [1, 2, 3], shape: [1, 2] }), {
    name: 'AttnScopeError',
    message: /tokens|shape/,
  });
  assert.equal(trainer.steps, 0, 'a refused step is not counted');
  await model.dispose();
  assert.equal((await worker.memoryUsage()).heapInUse, before.heapInUse);
});
