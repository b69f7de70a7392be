// Memory: results are copies that survive later calls and heap growth, and
// good calls leave the wasm heap exactly where it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import { attendHead } from 'attnscope/reference';
import { assertClose, rng, seed001 } from './support.mjs';

const seed001Output = [1.660477, 2.660477, 2.339523, 3.339523];

test('results are independent copies, not views into wasm memory', () => {
  const a = engine.selfAttention(seed001);
  const b = engine.selfAttention(seed001);
  assert.notEqual(a.output.data.buffer, b.output.data.buffer);
  assert.notEqual(a.trace.weights.data.buffer, a.trace.scores.data.buffer);
  a.output.data.fill(0);
  assertClose(b.output.data, seed001Output, { atol: 1e-6, what: 'b unaffected by writes to a' });
  assertClose(engine.selfAttention(seed001).output.data, seed001Output, {
    atol: 1e-6,
    what: 'next call',
  });
});

test('memory growth during a call corrupts neither earlier nor new results', () => {
  const before = engine.selfAttention(seed001);
  const sizeBefore = engine.memoryUsage().heapSize;
  // A traced call needing ~4·T² floats: far beyond the initial 16 MiB heap.
  const T = 1200;
  const r = rng(17);
  const q = r.floats(T * 4);
  const k = r.floats(T * 4);
  const v = r.floats(T * 4);
  const big = engine.attention({ q, k, v, shape: [T, 4], trace: true });
  assert.ok(engine.memoryUsage().heapSize > sizeBefore, 'the heap grew');
  assertClose(before.output.data, seed001Output, {
    atol: 1e-6,
    what: 'result from before the growth',
  });
  assertClose(before.trace.weights.data, [0.6697615, 0.3302385, 0.3302385, 0.6697615], {
    atol: 1e-6,
    what: 'weights from before',
  });
  // Spot-check rows of the big result against the reference.
  const ref = attendHead(q, k, v, T, 4, 4, 0.5, () => 0);
  for (const row of [0, 1, 599, T - 1]) {
    assertClose(
      big.output.data.subarray(row * 4, row * 4 + 4),
      ref.output.subarray(row * 4, row * 4 + 4),
      { atol: 3e-5, rtol: 3e-5, what: `row ${row}` },
    );
    assertClose(
      big.trace.weights.data.subarray(row * T, (row + 1) * T),
      ref.weights.subarray(row * T, (row + 1) * T),
      { atol: 1e-6, rtol: 3e-5, what: `weights row ${row}` },
    );
  }
  assertClose(engine.selfAttention(seed001).output.data, seed001Output, {
    atol: 1e-6,
    what: 'after growth',
  });
});

test('2 000 good calls of every kind leave the wasm heap where it was', () => {
  const r = rng(23);
  const [B, T, C, H] = [2, 9, 8, 2];
  const x = r.floats(B * T * C);
  const w = () => r.floats(C * C);
  const att = { wq: w(), wk: w(), wv: w(), wo: w(), heads: H };
  const calls = [
    () => engine.selfAttention({ x, shape: [B, T, C], ...att, mask: 'causal' }),
    () =>
      engine.selfAttention({
        x,
        shape: [B, T, C],
        ...att,
        mask: { lengths: [3, 9] },
        trace: false,
      }),
    () =>
      engine.attention({
        q: x,
        k: x,
        v: x,
        shape: [B, T, C],
        mask: { additive: new Float32Array(T * T) },
      }),
    () =>
      engine.transformerBlock({
        x,
        shape: [B, T, C],
        attention: att,
        ff1: { weight: w() },
        ff2: { weight: w() },
        hidden: C,
      }),
    () => engine.layerNorm({ x, shape: [B, T, C] }),
    () => engine.positionalEncoding({ length: T, dim: C }),
  ];
  const run = (n) => {
    for (let i = 0; i < n; i++) calls[i % calls.length]();
  };
  run(60);
  const before = engine.memoryUsage();
  run(2000);
  const after = engine.memoryUsage();
  assert.equal(after.heapInUse, before.heapInUse, 'bytes allocated by malloc');
  assert.equal(after.heapSize, before.heapSize, 'wasm memory size');
});
