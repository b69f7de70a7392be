// The worked examples of the source tutorials, through the JS API.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { hasRelaxedSimd } from 'attnscope';

import { engine } from './engine.mjs';
import { assertClose } from './support.mjs';

test('seed 001: X = I, W_Q = W_K = I, W_V = [[1,2],[3,4]], scaled by 1/sqrt(2)', () => {
  const r = engine.selfAttention({
    x: [
      [1, 0],
      [0, 1],
    ],
    wq: [
      [1, 0],
      [0, 1],
    ],
    wk: [
      [1, 0],
      [0, 1],
    ],
    wv: [
      [1, 2],
      [3, 4],
    ],
  });
  const w = Math.exp(Math.SQRT1_2) / (Math.exp(Math.SQRT1_2) + 1); // 0.6697615…
  assert.equal(w.toFixed(7), '0.6697615');
  assert.deepEqual(r.trace.weights.shape, [1, 2, 2]);
  assertClose(r.trace.weights.data, [w, 1 - w, 1 - w, w], { atol: 1e-7, what: 'weights' });
  assert.deepEqual(r.output.shape, [2, 2]);
  assertClose(r.output.data, [1.660477, 2.660477, 2.339523, 3.339523], {
    atol: 1e-6,
    what: 'output',
  });
  assertClose(r.trace.scores.data, [1, 0, 0, 1], { atol: 0, what: 'scores' });
  assertClose(r.trace.scaled.data, [Math.SQRT1_2, 0, 0, Math.SQRT1_2], {
    atol: 1e-7,
    what: 'scaled',
  });
  assert.equal(r.fullyMaskedCount, 0);
});

test('seed 001 on the fast path gives the same output', () => {
  const r = engine.selfAttention({
    x: new Float32Array([1, 0, 0, 1]),
    shape: [2, 2],
    wq: new Float32Array([1, 0, 0, 1]),
    wk: new Float32Array([1, 0, 0, 1]),
    wv: new Float32Array([1, 2, 3, 4]),
    trace: false,
  });
  assert.equal(r.trace, undefined);
  assertClose(r.output.data, [1.660477, 2.660477, 2.339523, 3.339523], {
    atol: 1e-6,
    what: 'output',
  });
});

test('seed 002: three inputs of dimension 4, keys/queries/values and unscaled scores', () => {
  const x = [
    [1, 0, 1, 0],
    [0, 2, 0, 2],
    [1, 1, 1, 1],
  ];
  const wk = [
    [0, 0, 1],
    [1, 1, 0],
    [0, 1, 0],
    [1, 1, 0],
  ];
  const wq = [
    [1, 0, 1],
    [1, 0, 0],
    [0, 0, 1],
    [0, 1, 1],
  ];
  const wv = [
    [0, 2, 0],
    [0, 3, 0],
    [1, 0, 3],
    [1, 1, 0],
  ];
  const r = engine.selfAttention({ x, wq, wk, wv, scale: false });
  const t = r.trace;
  assert.deepEqual(t.k.shape, [1, 3, 3]);
  assert.deepEqual([...t.k.data], [0, 1, 1, 4, 4, 0, 2, 3, 1]);
  assert.deepEqual([...t.v.data], [1, 2, 3, 2, 8, 0, 2, 6, 3]);
  assert.deepEqual([...t.q.data], [1, 0, 2, 2, 2, 2, 2, 1, 3]);
  assert.deepEqual(t.scores.shape, [1, 3, 3]);
  assert.deepEqual([...t.scores.data.subarray(0, 3)], [2, 4, 4]);
  const e2 = Math.exp(-2);
  const w = [e2 / (e2 + 2), 1 / (e2 + 2), 1 / (e2 + 2)];
  assertClose(t.weights.data.subarray(0, 3), w, { atol: 1e-7, what: 'weights row 1' });
  const out1 = [0, 1, 2].map(
    (c) => w[0] * [1, 2, 3][c] + w[1] * [2, 8, 0][c] + w[2] * [2, 6, 3][c],
  );
  assertClose(r.output.data.subarray(0, 3), out1, { atol: 1e-6, what: 'output 1' });
  // the tutorial rounds the weights to [0.0, 0.5, 0.5] and gets [2.0, 7.0, 1.5]
  assertClose(r.output.data.subarray(0, 3), [2.0, 7.0, 1.5], {
    atol: 0.41,
    what: 'output 1 (rounded)',
  });
});

test('version and simdArch are reported', async () => {
  const { version } = await import('attnscope');
  const pkg = (await import('attnscope/package.json', { with: { type: 'json' } })).default;
  assert.match(engine.version, /^\d+\.\d+\.\d+$/);
  assert.equal(engine.version, version, 'core and package agree');
  assert.equal(version, pkg.version, 'package.json agrees');
  assert.equal(engine.simdArch, hasRelaxedSimd() ? 'sse2+relaxed_madd' : 'sse2');
});
