// A model of GPT-2 medium's size (24 layers, 16 heads, C = 1 024, V = 50 257,
// 1 024 positions: 1.4 GB in float32), written to disk by the test and read
// as the site reads a visitor's file (engine.loadModelFromBlob): it runs as
// the double reference does, generates through the key/value cache and the
// greedy head, and gives all its memory back.
import assert from 'node:assert/strict';
import { mkdtempSync, openAsBlob, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

import { gpt2ForwardReference } from 'attnscope/reference';
import { engine } from './engine.mjs';
import { argmax, assertClose } from './support.mjs';
import { gpt2Shapes, writeGpt2File } from './support-gpt2.mjs';

const kMedium = { layers: 24, heads: 16, dModel: 1024, vocabSize: 50257, contextLength: 1024 };

const maxAbs = (values) => values.reduce((m, x) => Math.max(m, Math.abs(x)), 0);

test('a GPT-2-medium-sized file loads from disk, runs as the double reference does, generates and frees its memory', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'attnscope-medium-'));
  try {
    const path = join(dir, 'gpt2-medium.safetensors');
    const file = writeGpt2File(path, kMedium, 5);
    const floats = gpt2Shapes(kMedium).reduce((n, [, shape]) => n + shape[0] * (shape[1] ?? 1), 0);
    const before = engine.memoryUsage().heapInUse;
    const model = await engine.loadModelFromBlob(await openAsBlob(path));
    try {
      assert.deepEqual(model.config, { architecture: 'gpt2', ...kMedium });
      // The weights once, and little else: the file is streamed in, never held whole.
      const held = engine.memoryUsage().heapInUse - before;
      assert.ok(
        held >= 4 * floats && held < 4.2 * floats,
        `the loaded model holds ${held} bytes for ${floats} floats`,
      );

      const tokens = [464, 3290, 373, 257];
      const T = tokens.length;
      const V = kMedium.vocabSize;
      const got = model.forward({ tokens, trace: true });
      const want = gpt2ForwardReference(file.weights, file.config, tokens);
      // float32 against double through 24 layers: errors relative to the largest logit.
      assertClose(got.logits.data, want.logits, {
        atol: 2e-5 * maxAbs(want.logits),
        rtol: 1e-5,
        what: 'logits',
      });
      for (const l of [0, kMedium.layers - 1]) {
        assert.deepEqual(got.attentions[l].shape, [kMedium.heads, T, T]);
        assertClose(got.attentions[l].data, want.attentions[l], {
          atol: 5e-6,
          rtol: 1e-5,
          what: `layer ${l}'s attention`,
        });
      }

      // 16 new tokens, through the greedy head (generate makes it from this many on): each is
      // the most likely one after those before it, as one forward pass over them all says.
      const generated = model.generate({ tokens, maxNewTokens: 16 }).tokens;
      const sequence = [...tokens, ...generated];
      const { logits } = model.forward({ tokens: sequence.slice(0, -1), trace: false });
      const expected = generated.map((_, i) => argmax(logits.data, (T - 1 + i) * V, V));
      assert.deepEqual(generated, expected);
    } finally {
      model.dispose();
    }
    assert.equal(engine.memoryUsage().heapInUse, before, 'dispose gives every byte back');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
