// engine.loadModelFromBlob: the same model as loadModel, read from a Blob a
// piece at a time (pieces of 8 MiB, so a tensor may span several), from an
// in-memory Blob, from a file on disk (fs.openAsBlob) and in the worker;
// progress reported up to the file's size. Its bad files are in
// model-errors.test.mjs.
import assert from 'node:assert/strict';
import { openAsBlob } from 'node:fs';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { createAttnScopeWorker } from 'attnscope/worker';
import { engine, engineOptions } from './engine.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const tokens = [3, 1, 4, 1, 5, 9, 2, 6];

/** Both models give the same logits, attention and saved file, bit for bit. */
function assertSameModel(got, want) {
  assert.deepEqual(got.config, want.config);
  assert.deepEqual(got.forward({ tokens }), want.forward({ tokens }));
  assert.deepEqual(got.save(), want.save());
}

for (const dtype of ['F32', 'F16', 'BF16']) {
  test(`a ${dtype} file from a Blob is the model loadModel gives, bit for bit`, async () => {
    const tiny = tinyGpt2({ dtype, prefix: 'transformer.', seed: 8 });
    const progress = [];
    const fromBlob = await engine.loadModelFromBlob(new Blob([tiny.bytes]), {
      onProgress: (loaded, total) => progress.push([loaded, total]),
    });
    const fromBytes = engine.loadModel(tiny.bytes);
    try {
      assertSameModel(fromBlob, fromBytes);
      assert.ok(progress.length >= 2);
      assert.ok(progress.every(([, total]) => total === tiny.bytes.length));
      assert.ok(progress.every(([loaded], i) => i === 0 || loaded > progress[i - 1][0]));
      assert.equal(progress.at(-1)[0], tiny.bytes.length);
    } finally {
      fromBlob.dispose();
      fromBytes.dispose();
    }
  });
}

test('a tensor larger than a piece is read in several pieces and lands whole', async () => {
  // wte of 70 000 × 32 float32 is 8.5 MiB: it spans two 8 MiB pieces.
  const tiny = tinyGpt2({ vocabSize: 70_000, dModel: 32, heads: 2, layers: 1, seed: 2 });
  let reports = 0;
  const fromBlob = await engine.loadModelFromBlob(new Blob([tiny.bytes]), {
    onProgress: () => reports++,
  });
  const fromBytes = engine.loadModel(tiny.bytes);
  try {
    assert.ok(reports > 2 + 12 + 2, `${reports} reports: wte must take two pieces`);
    assertSameModel(fromBlob, fromBytes);
  } finally {
    fromBlob.dispose();
    fromBytes.dispose();
  }
});

test('a file on disk opened with fs.openAsBlob loads without reading it whole first', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attnscope-blob-'));
  try {
    const tiny = tinyGpt2({ dtype: 'BF16', seed: 5 });
    const path = join(dir, 'tiny.safetensors');
    writeFileSync(path, tiny.bytes);
    const fromDisk = await engine.loadModelFromBlob(await openAsBlob(path));
    const fromBytes = engine.loadModel(tiny.bytes);
    assertSameModel(fromDisk, fromBytes);
    fromDisk.dispose();
    fromBytes.dispose();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the worker loads a model from a Blob, and refuses a bad one naming the problem', async () => {
  const worker = createAttnScopeWorker(engineOptions);
  try {
    const tiny = tinyGpt2({ dtype: 'F16', seed: 9 });
    const remote = await worker.loadModelFromBlob(new Blob([tiny.bytes]));
    const local = engine.loadModel(tiny.bytes);
    assert.deepEqual(remote.config, local.config);
    assert.deepEqual(await remote.forward({ tokens }), local.forward({ tokens }));
    local.dispose();
    await remote.dispose();
    await assert.rejects(worker.loadModelFromBlob(new Blob([tiny.bytes.subarray(0, 40)])), {
      name: 'AttnScopeError',
      message: /^safetensors: the header length is \d+ bytes, beyond the end of the file/,
    });
  } finally {
    worker.terminate();
  }
});
