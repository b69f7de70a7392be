// trainer.gradient(name): the gradient of one weight from the last step,
// checked against central differences of the loss computed from the engine's
// own forward (the weights changed one at a time in the saved file and loaded
// back), zeros before the first step, and bad names rejected by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import { mulberry32 } from 'attnscope/reference';
import { engine } from './engine.mjs';

const config = { layers: 1, heads: 2, dModel: 8, vocabSize: 7, contextLength: 8 };
const B = 2,
  T = 6;

/** The byte offset of tensor `name`'s float32 data in a .safetensors file. */
function dataOffset(bytes, name) {
  const headerLength = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + headerLength)));
  assert.equal(header[name].dtype, 'F32');
  return 8 + headerLength + header[name].data_offsets[0];
}

/** Mean next-token cross-entropy of the batch, in double, from the engine's logits. */
function loss(model, tokens) {
  let sum = 0;
  for (let b = 0; b < B; b++) {
    const seq = tokens.slice(b * T, (b + 1) * T);
    const logits = model.forward({ tokens: seq.slice(0, T - 1), trace: false }).logits.data;
    for (let t = 0; t < T - 1; t++) {
      const row = logits.subarray(t * config.vocabSize, (t + 1) * config.vocabSize);
      const max = Math.max(...row);
      const logSum = Math.log(row.reduce((s, x) => s + Math.exp(x - max), 0)) + max;
      sum += logSum - row[seq[t + 1]];
    }
  }
  return sum / (B * (T - 1));
}

function withWeight(bytes, offset, index, value) {
  const copy = bytes.slice();
  new DataView(copy.buffer).setFloat32(offset + 4 * index, value, true);
  return copy;
}

test('trainer.gradient matches central differences of the loss', () => {
  const rng = mulberry32(5);
  const tokens = Array.from({ length: B * T }, () => Math.floor(rng() * config.vocabSize));
  const model = engine.createModel({ ...config, seed: 3 });
  try {
    const bytes = model.save(); // the weights the step's gradient is taken at
    const trainer = model.trainer({ lr: 1e-3 });
    for (const name of ['h.0.attn.c_attn.weight', 'h.0.mlp.c_fc.bias', 'wte.weight']) {
      assert.ok(
        trainer.gradient(name).data.every((g) => g === 0),
        `${name}: zeros before a step`,
      );
    }
    const stepLoss = trainer.step({ tokens, shape: [B, T] }).loss;
    for (const name of ['h.0.attn.c_attn.weight', 'wpe.weight']) {
      const g = trainer.gradient(name);
      const reloaded = engine.loadModel(bytes);
      const expectedShape = name === 'wpe.weight' ? [8, 8] : [8, 24];
      assert.deepEqual(g.shape, expectedShape);
      assert.ok(Math.abs(loss(reloaded, tokens) - stepLoss) < 1e-5, 'the step loss is the loss');
      reloaded.dispose();
      const offset = dataOffset(bytes, name);
      const weights = new Float32Array(bytes.slice(offset, offset + 4 * g.data.length).buffer);
      // The largest components, where the difference quotient stands well above float noise.
      const largest = [...g.data.keys()]
        .sort((a, b) => Math.abs(g.data[b]) - Math.abs(g.data[a]))
        .slice(0, 4);
      for (const i of largest) {
        const h = 1e-2;
        const at = (value) => {
          const m = engine.loadModel(withWeight(bytes, offset, i, value));
          try {
            return loss(m, tokens);
          } finally {
            m.dispose();
          }
        };
        const numeric = (at(weights[i] + h) - at(weights[i] - h)) / (2 * h);
        assert.ok(
          Math.abs(numeric - g.data[i]) <= 0.05 * Math.abs(g.data[i]) + 1e-4,
          `${name}[${i}]: gradient ${g.data[i]}, central difference ${numeric}`,
        );
      }
    }
  } finally {
    model.dispose();
  }
});

test('trainer.gradient rejects a name that is not a weight, and a replaced trainer', () => {
  const model = engine.createModel(config);
  try {
    const trainer = model.trainer({ lr: 1e-3 });
    const throwsNamed = (f, pattern) =>
      assert.throws(f, (e) => e instanceof AttnScopeError && pattern.test(e.message));
    throwsNamed(() => trainer.gradient('h.9.attn.c_attn.weight'), /^trainer.gradient: 'h.9/);
    throwsNamed(() => trainer.gradient(3), /^trainer.gradient: name must be/);
    assert.deepEqual(trainer.gradient('ln_f.weight').shape, [8]);
    model.trainer({ lr: 1e-3 });
    throwsNamed(
      () => trainer.gradient('ln_f.weight'),
      /^trainer.gradient: this trainer was replaced/,
    );
  } finally {
    model.dispose();
  }
});
