// engine.loadModel and the Model it returns, on tiny GPT-2 files the tests
// write themselves (support-gpt2.mjs): loading each dtype with and without
// the "transformer." prefix, the forward pass layer by layer against the
// double-precision reference, generation through the key/value cache
// against repeated whole forward passes, save → load bit for bit, dispose.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { gpt2ForwardReference } from 'attnscope/reference';
import { engine } from './engine.mjs';
import { argmax, assertClose } from './support.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const tokens = [3, 1, 4, 1, 5, 9, 2, 6, 5, 3];

for (const dtype of ['F32', 'F16', 'BF16']) {
  for (const prefix of ['', 'transformer.']) {
    test(`a ${dtype} file${prefix ? ' with the transformer. prefix' : ''} runs as the double reference does, layer by layer`, () => {
      const tiny = tinyGpt2({ dtype, prefix, seed: 7 });
      const model = engine.loadModel(tiny.bytes);
      try {
        assert.deepEqual(model.config, { architecture: 'gpt2', ...tiny.config });
        const want = gpt2ForwardReference(tiny.weights, tiny.config, tokens);
        const got = model.forward({ tokens, trace: true });
        const { layers, heads, dModel, vocabSize } = tiny.config;
        const T = tokens.length;
        assert.deepEqual(got.logits.shape, [T, vocabSize]);
        assertClose(got.logits.data, want.logits, { atol: 1e-5, rtol: 1e-5, what: 'logits' });
        assert.equal(got.attentions.length, layers);
        assert.equal(got.hidden.length, layers + 1);
        for (let l = 0; l < layers; l++) {
          assert.deepEqual(got.attentions[l].shape, [heads, T, T]);
          assertClose(got.attentions[l].data, want.attentions[l], {
            atol: 1e-6,
            what: `attentions[${l}]`,
          });
        }
        for (let l = 0; l <= layers; l++) {
          assert.deepEqual(got.hidden[l].shape, [T, dModel]);
          assertClose(got.hidden[l].data, want.hidden[l], { atol: 1e-5, what: `hidden[${l}]` });
        }
      } finally {
        model.dispose();
      }
    });
  }
}

test('forward without trace gives the traced logits, and nothing else', () => {
  const tiny = tinyGpt2({
    layers: 3,
    heads: 4,
    dModel: 16,
    vocabSize: 50,
    contextLength: 40,
    seed: 3,
  });
  const model = engine.loadModel(tiny.bytes);
  const many = Array.from({ length: 40 }, (_, i) => (i * 7) % 50);
  const traced = model.forward({ tokens: many, trace: true });
  const fast = model.forward({ tokens: Int32Array.from(many), trace: false });
  assert.equal(fast.attentions, undefined);
  assert.equal(fast.hidden, undefined);
  assertClose(fast.logits.data, traced.logits.data, { atol: 1e-5, rtol: 1e-5, what: 'logits' });
  assertClose(traced.logits.data, gpt2ForwardReference(tiny.weights, tiny.config, many).logits, {
    atol: 1e-4,
    rtol: 1e-4,
    what: 'logits at T = contextLength',
  });
  model.dispose();
});

test('heads come from options.config, else the file metadata n_head, else dModel / 64', () => {
  const tiny = tinyGpt2({ heads: 4, dModel: 8 });
  const fromFile = engine.loadModel(tiny.bytes);
  assert.equal(fromFile.config.heads, 4);
  const given = engine.loadModel(tiny.bytes, { config: { heads: 2 } });
  assert.equal(given.config.heads, 2);
  // Other head counts give other attention patterns.
  assert.notDeepEqual(
    fromFile.forward({ tokens: [1, 2, 3] }).logits.data,
    given.forward({ tokens: [1, 2, 3] }).logits.data,
  );
  const bare = engine.loadModel(tinyGpt2({ dModel: 128, metadata: null }).bytes);
  assert.equal(bare.config.heads, 2);
  for (const m of [fromFile, given, bare]) m.dispose();
});

test('greedy generation equals the argmax of repeated whole forward passes', () => {
  const tiny = tinyGpt2({
    layers: 2,
    heads: 2,
    dModel: 16,
    vocabSize: 23,
    contextLength: 24,
    seed: 5,
  });
  const model = engine.loadModel(tiny.bytes);
  const prompt = [4, 8, 15];
  const seen = [];
  // 20 new tokens: from 16 on, the steps go through the core's 8-bit head.
  const { tokens: generated } = model.generate({
    tokens: prompt,
    maxNewTokens: 20,
    onToken: (token, index) => void seen.push([token, index]),
  });
  const sequence = [...prompt];
  for (let i = 0; i < 20; i++) {
    const { logits } = model.forward({ tokens: sequence, trace: false });
    sequence.push(argmax(logits.data, (sequence.length - 1) * 23, 23));
  }
  assert.deepEqual(generated, sequence.slice(prompt.length));
  assert.deepEqual(
    seen,
    generated.map((t, i) => [t, i]),
  );
  model.dispose();
});

test("greedy generation through the 8-bit head gives the float32 logits' argmax", () => {
  // GPT-2-like spreads (initialisation 0.02), a vocabulary of many batches
  // with a tail, and the two ways of asking for greedy steps.
  const config = { layers: 2, heads: 4, dModel: 64, vocabSize: 3001, contextLength: 64 };
  const model = engine.createModel({ ...config, seed: 4 });
  const prompt = [17, 400, 2999, 5];
  const sequence = [...prompt];
  for (let i = 0; i < 40; i++) {
    const { logits } = model.forward({ tokens: sequence, trace: false, logits: 'last' });
    sequence.push(argmax(logits.data, 0, config.vocabSize));
  }
  const expected = sequence.slice(prompt.length);
  assert.deepEqual(model.generate({ tokens: prompt, maxNewTokens: 40 }).tokens, expected);
  assert.deepEqual(
    model.generate({ tokens: prompt, maxNewTokens: 40, temperature: 0.7, topK: 1 }).tokens,
    expected,
  );
  const before = engine.memoryUsage().heapInUse;
  let during = 0;
  const stopped = model.generate({
    tokens: prompt,
    maxNewTokens: 40,
    onToken: (_, i) => {
      during = Math.max(during, engine.memoryUsage().heapInUse);
      return i < 20;
    },
  });
  assert.deepEqual(stopped.tokens, expected.slice(0, 21));
  // The head: a byte per embedding value, beside the cache.
  assert.ok(during > before + config.vocabSize * config.dModel, 'the head was made');
  assert.equal(engine.memoryUsage().heapInUse, before, 'the head is freed with the cache');
  model.dispose();
});

test('sampling is deterministic for a seed, and the seed matters', () => {
  const tiny = tinyGpt2({ vocabSize: 40, contextLength: 32, seed: 9 });
  const model = engine.loadModel(tiny.bytes);
  const args = { tokens: [1, 2], maxNewTokens: 20, temperature: 1.5, topK: 30, topP: 0.95 };
  const a = model.generate({ ...args, seed: 42 }).tokens;
  assert.deepEqual(model.generate({ ...args, seed: 42 }).tokens, a);
  assert.equal(a.length, 20);
  assert.notDeepEqual(model.generate({ ...args, seed: 43 }).tokens, a);
  const stopped = model.generate({ ...args, seed: 42, onToken: (_, i) => i < 4 });
  assert.deepEqual(stopped.tokens, a.slice(0, 5));
  assert.deepEqual(model.generate({ ...args, maxNewTokens: 0 }).tokens, []);
  model.dispose();
});

test('save writes a file that loads back to the same outputs bit for bit', () => {
  for (const dtype of ['F32', 'BF16']) {
    const tiny = tinyGpt2({ dtype, prefix: 'transformer.', heads: 4, seed: 11 });
    const model = engine.loadModel(tiny.bytes);
    const saved = model.save();
    const again = engine.loadModel(saved);
    assert.deepEqual(again.config, model.config);
    const a = model.forward({ tokens, trace: true });
    const b = again.forward({ tokens, trace: true });
    assert.deepEqual(b.logits.data, a.logits.data);
    assert.deepEqual(b.attentions, a.attentions);
    assert.deepEqual(b.hidden, a.hidden);
    assert.deepEqual(again.save(), saved);
    model.dispose();
    again.dispose();
  }
});

test('dispose frees every byte, and a disposed model says so', () => {
  const before = engine.memoryUsage().heapInUse;
  const model = engine.loadModel(tinyGpt2({ dModel: 64, vocabSize: 500, seed: 2 }).bytes);
  assert.ok(
    engine.memoryUsage().heapInUse > before + 500 * 64 * 4,
    'the weights are in wasm memory',
  );
  model.forward({ tokens: [1, 2, 3] });
  model.generate({ tokens: [1], maxNewTokens: 3 });
  model.dispose();
  assert.equal(model.disposed, true);
  assert.equal(engine.memoryUsage().heapInUse, before);
  model.dispose(); // a second dispose is harmless
  for (const call of [
    () => model.forward({ tokens: [1] }),
    () => model.generate({ tokens: [1], maxNewTokens: 1 }),
    () => model.save(),
  ]) {
    assert.throws(call, { name: 'AttnScopeError', message: /the model was disposed/ });
  }
  assert.equal(engine.memoryUsage().heapInUse, before);
});

test('model.weight gives a copy of each weight as the file holds it, and names a wrong name', () => {
  const tiny = tinyGpt2({ seed: 13 });
  const model = engine.loadModel(tiny.bytes);
  try {
    for (const [name, { data, shape }] of tiny.weights) {
      if (/attn\.(bias|masked_bias)$/.test(name)) continue;
      const got = model.weight(name);
      assert.deepEqual(got.shape, shape);
      assert.deepEqual(got.data, data);
    }
    const logits = model.forward({ tokens: [1, 2, 3] }).logits.data;
    model.weight('ln_f.bias').data.fill(7); // a copy: the model is unchanged
    assert.deepEqual(model.weight('ln_f.bias').data, tiny.weights.get('ln_f.bias').data);
    // A block's matrix, which the core keeps in the products' panels: a
    // copy in row order too, and reading it leaves the forward as it was.
    const name = 'h.1.mlp.c_fc.weight';
    model.weight(name).data.fill(7);
    assert.deepEqual(model.weight(name).data, tiny.weights.get(name).data);
    assert.deepEqual(model.forward({ tokens: [1, 2, 3] }).logits.data, logits);
    assert.throws(() => model.weight('transformer.ln_f.bias'), {
      name: 'AttnScopeError',
      message: /model\.weight: the model has no weight transformer\.ln_f\.bias/,
    });
    assert.throws(() => model.weight(3), { message: /name must be a string/ });
  } finally {
    model.dispose();
  }
});
