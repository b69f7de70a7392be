// The attention variants through attnscope/worker: a worker forwards the new
// options and results, and the pool's split of grouped (GQA) and KV-cache
// calls, by kv-head group or by batch, equals the single engine bit for bit.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { createAttnScopePool, createAttnScopeWorker } from 'attnscope/worker';
import { splitAttention } from '../../dist/attention-split.js';

import { engine, engineOptions } from './engine.mjs';
import { rng } from './support.mjs';

const worker = createAttnScopeWorker(engineOptions);
// threads: 1 keeps the pool of single-thread workers that copies and splits
// (Node would otherwise run it as one threaded engine: threads.test.mjs).
const pool = createAttnScopePool({ workers: 3, minSplitFlops: 0, threads: 1 });
after(() => {
  worker.terminate();
  pool.terminate();
});

/** q (B, H, Tq, d), k and v (B, Hkv, Tk, d / dv) with their shapes, rank 3 when B is omitted. */
function grouped(seed, { B, H, Hkv, Tq, Tk, d, dv = d }) {
  const r = rng(seed);
  const batch = B ?? 1;
  return {
    q: r.floats(batch * H * Tq * d),
    k: r.floats(batch * Hkv * Tk * d),
    v: r.floats(batch * Hkv * Tk * dv),
    shape: B === undefined ? [H, Tq, d] : [B, H, Tq, d],
    kvShape: B === undefined ? [Hkv, Tk, d] : [B, Hkv, Tk, d],
    dv,
  };
}

test('a worker returns what the engine returns for every variant option', async () => {
  const args = {
    ...grouped(1, { B: 2, H: 4, Hkv: 2, Tq: 3, Tk: 9, d: 8 }),
    rope: { base: 500 },
    bias: 'alibi',
    mask: { causal: true, window: 4, sinks: 1 },
  };
  for (const trace of [true, false]) {
    assert.deepEqual(
      await worker.attention({ ...args, trace }),
      engine.attention({ ...args, trace }),
      `trace ${trace}`,
    );
  }
  const r = rng(2);
  const sa = {
    x: r.floats(5 * 8),
    shape: [5, 8],
    wq: r.floats(64),
    wk: r.floats(16),
    wv: r.floats(16),
    heads: 4,
    kvHeads: 1,
    rope: {},
    mask: { causal: true, window: 2 },
  };
  assert.deepEqual(await worker.selfAttention(sa), engine.selfAttention(sa));
  const llama = {
    x: r.floats(5 * 8),
    shape: [5, 8],
    attention: {
      wq: r.floats(64),
      wk: r.floats(32),
      wv: r.floats(32),
      wo: r.floats(64),
      heads: 4,
      kvHeads: 2,
    },
    gate: { weight: r.floats(8 * 12) },
    up: { weight: r.floats(8 * 12) },
    down: { weight: r.floats(12 * 8) },
    rope: {},
  };
  assert.deepEqual(await worker.llamaBlock(llama), engine.llamaBlock(llama));
  assert.deepEqual(
    await worker.rmsNorm({ x: llama.x, shape: [5, 8] }),
    engine.rmsNorm({ x: llama.x, shape: [5, 8] }),
  );
  await assert.rejects(
    worker.attention({ ...args, mask: { window: 0 } }),
    /attention: mask.window must be a positive integer, got 0/,
  );
});

test('grouped calls split by kv-head group keep each query head with its kv head', () => {
  // H = 8, Hkv = 4 over 3 workers: kv heads 2 + 1 + 1, query heads 4 + 2 + 2.
  const split = splitAttention(grouped(3, { H: 8, Hkv: 4, Tq: 5, Tk: 7, d: 4 }), 3, 0);
  assert.equal(split.axis, 0);
  assert.deepEqual(
    split.parts.map((p) => p.args.shape),
    [
      [4, 5, 4],
      [2, 5, 4],
      [2, 5, 4],
    ],
  );
  assert.deepEqual(
    split.parts.map((p) => p.args.kvShape),
    [
      [2, 7, 4],
      [1, 7, 4],
      [1, 7, 4],
    ],
  );
  assert.deepEqual(
    split.parts.map((p) => p.args.k.length),
    [2 * 7 * 4, 7 * 4, 7 * 4],
  );
  // MQA: one kv head cannot be split; several batches can.
  assert.equal(
    splitAttention(grouped(4, { B: 1, H: 8, Hkv: 1, Tq: 5, Tk: 5, d: 4 }), 3, 0),
    undefined,
  );
  const batches = splitAttention(grouped(5, { B: 3, H: 8, Hkv: 1, Tq: 1, Tk: 9, d: 4 }), 2, 0);
  assert.deepEqual(
    batches.parts.map((p) => p.args.kvShape),
    [
      [2, 1, 9, 4],
      [1, 1, 9, 4],
    ],
  );
  // ALiBi's slopes depend on the head index among all H, and a given bias is not sliced: heads stay together.
  assert.equal(
    splitAttention(
      { ...grouped(6, { B: 1, H: 8, Hkv: 2, Tq: 5, Tk: 5, d: 4 }), bias: 'alibi' },
      3,
      0,
    ),
    undefined,
  );
  const values = { values: new Float32Array(2 * 8 * 25), shape: [2, 8, 5, 5] };
  assert.equal(
    splitAttention(
      { ...grouped(7, { B: 2, H: 8, Hkv: 2, Tq: 5, Tk: 5, d: 4 }), bias: values },
      3,
      0,
    ),
    undefined,
  );
  assert.ok(
    splitAttention(
      { ...grouped(8, { B: 2, H: 8, Hkv: 2, Tq: 5, Tk: 5, d: 4 }), bias: 'alibi' },
      3,
      0,
    ),
  );
  // Invalid grouping is left whole, for the engine to report.
  assert.equal(splitAttention(grouped(9, { H: 6, Hkv: 4, Tq: 5, Tk: 5, d: 4 }), 3, 0), undefined);
  assert.equal(splitAttention(grouped(10, { H: 4, Hkv: 2, Tq: 6, Tk: 5, d: 4 }), 3, 0), undefined);
});

test('the pool equals the single engine bit for bit with GQA, a KV cache and every variant', async () => {
  const cases = [
    { dims: { H: 8, Hkv: 4, Tq: 13, Tk: 13, d: 8 }, extra: { mask: 'causal' } },
    {
      dims: { B: 1, H: 6, Hkv: 3, Tq: 4, Tk: 70, d: 8, dv: 5 },
      extra: { rope: {}, mask: { causal: true, window: 9, sinks: 2 } },
    },
    {
      dims: { B: 1, H: 8, Hkv: 2, Tq: 1, Tk: 140, d: 16 },
      extra: { rope: { base: 1e6 }, mask: 'causal' },
    },
    {
      dims: { B: 3, H: 4, Hkv: 1, Tq: 2, Tk: 11, d: 4 },
      extra: { bias: 'alibi', mask: { causal: true, lengths: [11, 5, 0] } },
    },
    {
      dims: { B: 4, H: 2, Hkv: 2, Tq: 6, Tk: 6, d: 4 },
      extra: { bias: { alibi: true }, rope: {}, mask: { window: 2 } },
    },
  ];
  for (const [i, c] of cases.entries()) {
    const args = { ...grouped(20 + i, c.dims), ...c.extra };
    const split = splitAttention(args, pool.size, 0);
    assert.ok(split && split.parts.length >= 2, `case ${i} is split`);
    for (const trace of [false, true]) {
      assert.deepEqual(
        await pool.attention({ ...args, trace }),
        engine.attention({ ...args, trace }),
        `case ${i}, trace ${trace}`,
      );
    }
  }
});

test('a per-head mask (B, H, Tq, Tk) follows its query heads when a grouped call is split', async () => {
  const dims = { B: 1, H: 6, Hkv: 2, Tq: 3, Tk: 8, d: 4 };
  const r = rng(40);
  const additive = Float32Array.from(r.floats(6 * 3 * 8), (x) => (x < -0.8 ? -Infinity : x));
  const args = {
    ...grouped(41, dims),
    mask: { causal: true, additive, additiveShape: [1, 6, 3, 8] },
  };
  const split = splitAttention(args, 2, 0);
  assert.deepEqual(
    split.parts.map((p) => p.args.mask.additiveShape),
    [
      [1, 3, 3, 8],
      [1, 3, 3, 8],
    ],
  );
  for (const trace of [false, true]) {
    assert.deepEqual(
      await pool.attention({ ...args, trace }),
      engine.attention({ ...args, trace }),
      `trace ${trace}`,
    );
  }
  await assert.rejects(
    pool.attention({ ...args, mask: { sinks: 9, window: 1 } }),
    /attention: mask.sinks is 9, more than Tk=8 keys/,
  );
});
