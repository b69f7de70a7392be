// The shipped model (models/kjv/): its file loads with the package, has the
// config and size its card gives, its tokenizer round-trips and cuts text
// into word pieces, and it predicts a held-out passage better than the
// bigram baseline does on the whole held-out part, so broken or swapped
// weights fail here.
import assert from 'node:assert/strict';
import { readFileSync, statSync } from 'node:fs';
import { test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { loadBpeFile } from '../../scripts/model/bpe-file.mjs';

const dir = new URL('../../models/kjv/', import.meta.url);
const modelFile = new URL('model.safetensors', dir);
const tokenizer = loadBpeFile(new URL('tokenizer.json', dir));
const { bigramLoss } = JSON.parse(readFileSync(new URL('bigram.json', dir), 'utf8'));
// Genesis 40:1-4, from a chapter the training never saw (every 20th chapter is held out).
const kHeldOut =
  'And it came to pass after these things, that the butler of the king of Egypt and his baker had offended their lord the king of Egypt.\n' +
  'And Pharaoh was wroth against two of his officers, against the chief of the butlers, and against the chief of the bakers.\n' +
  'And he put them in ward in the house of the captain of the guard, into the prison, the place where Joseph was bound.\n' +
  'And the captain of the guard charged Joseph with them, and he served them: and they continued a season in ward.\n';

/** Mean next-token cross-entropy (nats) of `ids` under `model`. */
function meanLoss(model, ids) {
  const { logits } = model.forward({ tokens: ids, trace: false });
  const V = model.config.vocabSize;
  let total = 0;
  for (let t = 0; t + 1 < ids.length; t++) {
    const row = logits.data.subarray(t * V, (t + 1) * V);
    let top = -Infinity;
    for (const v of row) top = Math.max(top, v);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - top);
    total += Math.log(sum) + top - row[ids[t + 1]];
  }
  return total / (ids.length - 1);
}

test('kjv model: the tokenizer has 4096 word pieces and round-trips', () => {
  assert.equal(tokenizer.vocabSize, 4096);
  const ids = tokenizer.encode(kHeldOut);
  assert.equal(tokenizer.decode(ids), kHeldOut);
  // Common words are one token each, with their leading space.
  for (const word of [' the', ' king', ' Egypt', ' Joseph', 'And'])
    assert.equal(tokenizer.encode(word).length, 1, `"${word}" is one token`);
  assert.ok(
    ids.length < kHeldOut.length / 3,
    `${ids.length} tokens for ${kHeldOut.length} characters`,
  );
});

test('kjv model: the file loads with its config and is at most 8 MB', async () => {
  assert.ok(statSync(modelFile).size <= 8e6, `${statSync(modelFile).size} bytes`);
  const engine = await createAttnScope();
  const model = engine.loadModel(readFileSync(modelFile));
  try {
    assert.deepEqual(model.config, {
      architecture: 'gpt2',
      layers: 4,
      heads: 4,
      dModel: 128,
      vocabSize: 4096,
      contextLength: 128,
    });
  } finally {
    model.dispose();
  }
});

test('kjv model: a held-out passage costs fewer nats a token than the bigram baseline', async () => {
  const engine = await createAttnScope();
  const model = engine.loadModel(readFileSync(modelFile));
  try {
    const ids = tokenizer.encode(kHeldOut).slice(0, model.config.contextLength);
    const loss = meanLoss(model, ids);
    assert.ok(Number.isFinite(bigramLoss) && bigramLoss > 0);
    assert.ok(loss < bigramLoss, `loss ${loss.toFixed(3)} is not below the bigram's ${bigramLoss}`);
  } finally {
    model.dispose();
  }
});
