// Training through the package: engine.attentionBackward against the double
// reference (attnscope/reference) and finite differences of the reference
// forward, on both paths and with causal, padding and fully masked queries;
// engine.createModel → model.trainer → trainer.step lowering the loss on a
// copy task; save → loadModel giving the same logits; determinism for a
// seed; bad input rejected by name with memory unchanged.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import {
  attendHead,
  attentionBackwardReference,
  maskFunction,
  mulberry32,
} from 'attnscope/reference';
import { engine } from './engine.mjs';
import { assertClose } from './support.mjs';

function randoms(rng, n, lo = -1, hi = 1) {
  return Float32Array.from({ length: n }, () => lo + (hi - lo) * rng());
}

const masks = {
  none: 'none',
  causal: 'causal',
  // The second sequence sees no key at all: its queries are fully masked.
  padding: (T) => ({ causal: true, lengths: [Math.min(3, T), 0] }),
};

for (const T of [1, 7, 9, 17]) {
  for (const d of [1, 4, 8]) {
    for (const [maskName, maskOf] of Object.entries(masks)) {
      const mask = typeof maskOf === 'function' ? maskOf(T) : maskOf;
      test(`attentionBackward, T=${T}, d=${d}, mask ${maskName}: traced and flash match the double reference`, () => {
        const B = 2,
          H = 2,
          rng = mulberry32(T * 100 + d);
        const q = randoms(rng, B * H * T * d),
          k = randoms(rng, B * H * T * d);
        const v = randoms(rng, B * H * T * d),
          dOutput = randoms(rng, B * H * T * d);
        const spec = mask === 'none' ? {} : mask === 'causal' ? { causal: true } : mask;
        const want = attentionBackwardReference(
          q,
          k,
          v,
          dOutput,
          { B, H, T, dk: d, dv: d },
          1 / Math.sqrt(d),
          spec,
        );
        for (const trace of [true, false]) {
          const got = engine.attentionBackward({
            q,
            k,
            v,
            dOutput,
            shape: [B, H, T, d],
            mask,
            trace,
          });
          for (const name of ['dq', 'dk', 'dv']) {
            assert.deepEqual(got[name].shape, [B, H, T, d]);
            assert.ok(got[name].data instanceof Float32Array);
            assertClose(got[name].data, want[name], {
              atol: 2e-5,
              rtol: 1e-4,
              what: `${name} (trace ${trace})`,
            });
          }
        }
      });
    }
  }
}

test('attentionBackward with grouped keys and values sums the gradients of each group', () => {
  const B = 2,
    H = 4,
    Hkv = 2,
    T = 9,
    d = 4,
    group = H / Hkv,
    rng = mulberry32(11);
  const q = randoms(rng, B * H * T * d),
    dOutput = randoms(rng, B * H * T * d);
  const k = randoms(rng, B * Hkv * T * d),
    v = randoms(rng, B * Hkv * T * d);
  // The reference on keys and values repeated for every query head of their group.
  const expand = (x) => {
    const out = new Float32Array(B * H * T * d);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        out.set(
          x.subarray(
            (b * Hkv + Math.floor(h / group)) * T * d,
            (b * Hkv + Math.floor(h / group) + 1) * T * d,
          ),
          (b * H + h) * T * d,
        );
    return out;
  };
  const spec = { causal: true, lengths: [T, 5] };
  const full = attentionBackwardReference(
    q,
    expand(k),
    expand(v),
    dOutput,
    { B, H, T, dk: d, dv: d },
    1 / Math.sqrt(d),
    spec,
  );
  const fold = (x) => {
    const out = new Float64Array(B * Hkv * T * d);
    for (let b = 0; b < B; b++)
      for (let h = 0; h < H; h++)
        for (let i = 0; i < T * d; i++)
          out[(b * Hkv + Math.floor(h / group)) * T * d + i] += x[(b * H + h) * T * d + i];
    return out;
  };
  for (const trace of [true, false]) {
    const got = engine.attentionBackward({
      q,
      k,
      v,
      dOutput,
      shape: [B, H, T, d],
      kvShape: [B, Hkv, T, d],
      mask: spec,
      trace,
    });
    assert.deepEqual(got.dk.shape, [B, Hkv, T, d]);
    assertClose(got.dq.data, full.dq, { atol: 2e-5, rtol: 1e-4, what: `dq (trace ${trace})` });
    assertClose(got.dk.data, fold(full.dk), {
      atol: 2e-5,
      rtol: 1e-4,
      what: `dk (trace ${trace})`,
    });
    assertClose(got.dv.data, fold(full.dv), {
      atol: 2e-5,
      rtol: 1e-4,
      what: `dv (trace ${trace})`,
    });
  }
});

test('the double reference of the backward agrees with central finite differences', () => {
  const B = 2,
    H = 1,
    T = 6,
    d = 3,
    factor = 0.8,
    rng = mulberry32(5);
  const inputs = {
    q: randoms(rng, B * H * T * d),
    k: randoms(rng, B * H * T * d),
    v: randoms(rng, B * H * T * d),
  };
  const dOutput = randoms(rng, B * H * T * d);
  const spec = { causal: true, lengths: [4, 0] };
  const masksOf = maskFunction(spec, B, H, T);
  const x = Object.fromEntries(Object.entries(inputs).map(([n, a]) => [n, Float64Array.from(a)]));
  const loss = () => {
    let s = 0;
    for (let b = 0; b < B; b++) {
      const part = (a) => a.subarray(b * T * d, (b + 1) * T * d);
      const { output } = attendHead(
        part(x.q),
        part(x.k),
        part(x.v),
        T,
        d,
        d,
        factor,
        masksOf(b, 0),
      );
      for (let i = 0; i < T * d; i++) s += output[i] * dOutput[b * T * d + i];
    }
    return s;
  };
  const want = attentionBackwardReference(
    x.q,
    x.k,
    x.v,
    dOutput,
    { B, H, T, dk: d, dv: d },
    factor,
    spec,
  );
  const h = 1e-6;
  for (const [name, grad] of [
    ['q', want.dq],
    ['k', want.dk],
    ['v', want.dv],
  ]) {
    for (let i = 0; i < grad.length; i++) {
      const saved = x[name][i];
      x[name][i] = saved + h;
      const up = loss();
      x[name][i] = saved - h;
      const down = loss();
      x[name][i] = saved;
      const numeric = (up - down) / (2 * h);
      assert.ok(
        Math.abs(numeric - grad[i]) < 1e-7,
        `d${name}[${i}]: ${grad[i]} against ${numeric}`,
      );
    }
  }
  // And the engine's flash path on these inputs.
  const got = engine.attentionBackward({
    ...inputs,
    dOutput,
    shape: [B, H, T, d],
    scale: factor,
    mask: spec,
    trace: false,
  });
  assertClose(got.dq.data, want.dq, { atol: 1e-5, what: 'dq' });
  assert.ok(
    got.dq.data.subarray(T * d).every((g) => g === 0),
    'fully masked queries get zero dq',
  );
});

const copyConfig = { layers: 2, heads: 2, dModel: 16, vocabSize: 11, contextLength: 16 };

/** B sequences: 5 random tokens, then the same 5 again. */
function copyBatch(rng, B) {
  const tokens = [];
  for (let b = 0; b < B; b++) {
    const first = Array.from({ length: 5 }, () => Math.floor(rng() * 11));
    tokens.push(...first, ...first);
  }
  return tokens;
}

test('createModel → trainer.step lowers the loss on a copy task', () => {
  const model = engine.createModel({ ...copyConfig, seed: 1 });
  try {
    assert.deepEqual(model.config, { architecture: 'gpt2', ...copyConfig });
    const trainer = model.trainer({
      lr: 1e-2,
      betas: [0.9, 0.95],
      weightDecay: 0.01,
      clip: 1,
      warmup: 10,
      totalSteps: 300,
    });
    const rng = mulberry32(2);
    const losses = [];
    for (let s = 0; s < 300; s++)
      losses.push(trainer.step({ tokens: copyBatch(rng, 8), shape: [8, 10] }).loss);
    assert.equal(trainer.steps, 300);
    const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
    const first = mean(losses.slice(0, 10)),
      last = mean(losses.slice(-10));
    assert.ok(first > 2, `the first losses are about log(11): ${first}`);
    // 4 of the 9 predictions are random (log 11 each), the 5 copies learnable: ~1.07 at best.
    assert.ok(last < 0.6 * first && last < 1.4, `loss ${first} → ${last}`);
  } finally {
    model.dispose();
  }
});

test('a trained model saves and loads back to the same logits; a seed gives the same model', () => {
  const train = (seed) => {
    const model = engine.createModel({ ...copyConfig, seed });
    const trainer = model.trainer({ lr: 1e-2, clip: 1 });
    const rng = mulberry32(3);
    const losses = [];
    for (let s = 0; s < 5; s++)
      losses.push(
        trainer.step({ tokens: Int32Array.from(copyBatch(rng, 2)), shape: [2, 10] }).loss,
      );
    return { model, losses };
  };
  const a = train(7),
    b = train(7),
    c = train(8);
  const tokens = [1, 2, 3, 4, 5, 1, 2, 3];
  try {
    assert.deepEqual(a.losses, b.losses);
    assert.notDeepEqual(a.losses, c.losses);
    const logits = a.model.forward({ tokens, trace: false }).logits.data;
    assert.deepEqual(b.model.forward({ tokens, trace: false }).logits.data, logits);
    const loaded = engine.loadModel(a.model.save());
    try {
      assert.deepEqual(loaded.config, a.model.config);
      assert.deepEqual(loaded.forward({ tokens, trace: false }).logits.data, logits);
    } finally {
      loaded.dispose();
    }
  } finally {
    for (const m of [a.model, b.model, c.model]) m.dispose();
  }
});

test('bad input is rejected by name and leaves memory as it was', () => {
  const before = engine.memoryUsage().heapInUse;
  const q = new Float32Array(8),
    v = new Float32Array(8);
  const throwsNamed = (f, pattern) =>
    assert.throws(f, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  throwsNamed(
    () => engine.attentionBackward({ q, k: q, v, shape: [4, 2] }),
    /^attentionBackward: dOutput is required/,
  );
  throwsNamed(
    () => engine.attentionBackward({ q, k: q, v, shape: [4, 2], dOutput: new Float32Array(6) }),
    /^attentionBackward: dOutput has 6 values/,
  );
  throwsNamed(
    () =>
      engine.attentionBackward({
        q,
        k: q,
        v,
        shape: [4, 2],
        dOutput: Float32Array.of(0, 0, 0, NaN, 0, 0, 0, 0),
      }),
    /^attentionBackward: .*dOutput/,
  );
  throwsNamed(
    () => engine.createModel({ ...copyConfig, heads: 3 }),
    /^createModel: dModel=16 is not a multiple of heads=3/,
  );
  throwsNamed(() => engine.createModel({ ...copyConfig, layers: 0 }), /^createModel: layers/);
  throwsNamed(() => engine.createModel({ ...copyConfig, seed: -1 }), /^createModel: seed/);
  throwsNamed(
    () => engine.createModel({ ...copyConfig, layer: 2 }),
    /^createModel: has an unknown field 'layer'/,
  );
  const model = engine.createModel(copyConfig);
  throwsNamed(() => model.trainer({ lr: 0 }), /^model.trainer: lr is 0/);
  throwsNamed(
    () => model.trainer({ lr: 1e-3, betas: [0.9, 1] }),
    /^model.trainer: betas\[1\] is 1/,
  );
  throwsNamed(() => model.trainer({ lr: 1e-3, clip: -1 }), /^model.trainer: clip is -1/);
  throwsNamed(
    () => model.trainer({ lr: 1e-3, momentum: 0.9 }),
    /^model.trainer: has an unknown option 'momentum'/,
  );
  const trainer = model.trainer({ lr: 1e-3 });
  throwsNamed(
    () => trainer.step({ tokens: [1, 2, 3], shape: [1] }),
    /^trainer.step: shape must be \[B, T\]/,
  );
  throwsNamed(
    () => trainer.step({ tokens: [1, 2, 3], shape: [2, 2] }),
    /^trainer.step: tokens has 3 ids, expected B·T/,
  );
  throwsNamed(
    () => trainer.step({ tokens: [1], shape: [1, 1] }),
    /^trainer.step: shape\[1\] \(T\)/,
  );
  throwsNamed(
    () => trainer.step({ tokens: [1, 11], shape: [1, 2] }),
    /^trainer.step: tokens\[1\] is 11/,
  );
  throwsNamed(
    () => trainer.step({ tokens: new Array(18).fill(1), shape: [1, 18] }),
    /^trainer.step: shape\[1\] \(T\)/,
  );
  assert.equal(trainer.steps, 0);
  const newer = model.trainer({ lr: 1e-3 });
  throwsNamed(
    () => trainer.step({ tokens: [1, 2], shape: [1, 2] }),
    /^trainer.step: this trainer was replaced/,
  );
  assert.equal(typeof newer.step({ tokens: [1, 2], shape: [1, 2] }).loss, 'number');
  model.dispose();
  throwsNamed(
    () => newer.step({ tokens: [1, 2], shape: [1, 2] }),
    /^trainer.step: the model was disposed/,
  );
  throwsNamed(() => model.trainer({ lr: 1e-3 }), /^model.trainer: the model was disposed/);
  assert.equal(engine.memoryUsage().heapInUse, before);
});
