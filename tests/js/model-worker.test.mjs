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
