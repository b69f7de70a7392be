// attnscope/worker (Node flavour, worker_threads): the same API returning
// Promises, result buffers transferred, errors as AttnScopeError.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { createAttnScopeWorker, AttnScopeError } from 'attnscope/worker';

import { engine, engineOptions } from './engine.mjs';
import { I2, assertClose, rng, seed001, headsNotDividingWidth } from './support.mjs';

const worker = createAttnScopeWorker(engineOptions);
after(() => worker.terminate());

test('ready reports the same version and SIMD arch as the in-thread engine', async () => {
  assert.deepEqual(await worker.ready, {
    version: engine.version,
    simdArch: engine.simdArch,
    threads: engine.threads,
  });
  assert.equal(await worker.version, engine.version);
});

test('seed 001 through the worker', async () => {
  const r = await worker.selfAttention(seed001);
  assert.ok(r.output.data instanceof Float32Array);
  assert.deepEqual(r.output.shape, [2, 2]);
  assertClose(r.output.data, [1.660477, 2.660477, 2.339523, 3.339523], {
    atol: 1e-6,
    what: 'output',
  });
  assert.deepEqual(r.fullyMasked.shape, [1, 2]);
});

test('every method gives the same result as the in-thread engine', async () => {
  const r = rng(31);
  const [T, C] = [6, 4];
  const x = r.floats(T * C);
  const w = () => r.floats(C * C);
  const att = { wq: w(), wk: w(), wv: w(), wo: w(), heads: 2 };
  const calls = {
    selfAttention: { x, shape: [T, C], ...att, mask: 'causal' },
    attention: { q: x, k: x, v: x, shape: [T, C], trace: false },
    positionalEncoding: { length: T, dim: C },
    linear: { x, shape: [T, C], weight: w() },
    layerNorm: { x, shape: [T, C] },
    feedForward: { x, shape: [T, C], w1: w(), w2: w(), hidden: C, activation: 'gelu' },
    residualAdd: { a: x, b: x, shape: [T, C] },
    transformerBlock: {
      x,
      shape: [T, C],
      attention: att,
      ff1: { weight: w() },
      ff2: { weight: w() },
      hidden: C,
    },
  };
  for (const [method, args] of Object.entries(calls)) {
    assert.deepEqual(await worker[method](args), engine[method](args), method);
  }
});

test('bad input rejects with AttnScopeError and the worker keeps working', async () => {
  await assert.rejects(worker.selfAttention({ ...seed001, heads: 0 }), (e) => {
    assert.ok(e instanceof AttnScopeError);
    assert.match(e.message, /heads must be a positive integer/);
    return true;
  });
  await assert.rejects(worker.selfAttention(headsNotDividingWidth), AttnScopeError);
  await assert.rejects(
    worker.selfAttention({ ...seed001, wq: () => 1 }),
    /cannot be sent to the worker/,
  );
  assert.equal((await worker.selfAttention(seed001)).output.shape.length, 2);
});

test('calls may overlap; answers come back to the right caller', async () => {
  const results = await Promise.all(
    [1, 2, 3, 4, 5].map((T) => worker.positionalEncoding({ length: T, dim: 2 })),
  );
  assert.deepEqual(
    results.map((r) => r.shape),
    [
      [1, 2],
      [2, 2],
      [3, 2],
      [4, 2],
      [5, 2],
    ],
  );
});

test('terminate() rejects pending and later calls', async () => {
  const w = createAttnScopeWorker(engineOptions);
  await w.ready;
  const pending = w.attention({
    q: new Float32Array(300 * 8),
    k: new Float32Array(300 * 8),
    v: new Float32Array(300 * 8),
    shape: [300, 8],
  });
  w.terminate();
  await assert.rejects(pending, /worker terminated/);
  await assert.rejects(w.layerNorm({ x: I2 }), /worker terminated/);
});

test('a worker whose wasm cannot load rejects ready and calls with AttnScopeError', async () => {
  const w = createAttnScopeWorker({ wasmUrl: '/nonexistent/attnscope.wasm' });
  try {
    await assert.rejects(
      w.ready,
      (e) => e instanceof AttnScopeError && /could not read/.test(e.message),
    );
    await assert.rejects(w.selfAttention(seed001), AttnScopeError);
  } finally {
    w.terminate();
  }
});

test('buffers listed for transfer move to the worker and are detached here', async () => {
  const r = rng(32);
  const [T, d] = [5, 4];
  const make = () => ({
    q: r.floats(T * d),
    k: r.floats(T * d),
    v: r.floats(T * d),
    shape: [T, d],
    trace: false,
  });
  const args = make();
  const expected = engine.attention(args);
  const copy = { ...args, q: args.q.slice(), k: args.k.slice() };
  const result = await worker.attention(copy, [copy.q.buffer, copy.k.buffer]);
  assert.deepEqual(result, expected);
  assert.equal(copy.q.length, 0, 'q was moved');
  assert.equal(copy.k.length, 0, 'k was moved');
  assert.equal(copy.v.length, T * d, 'v was copied');
});

test("out stays on this side: the worker fills the caller's array, and a wrong one rejects", async () => {
  const r = rng(33);
  const [T, d] = [6, 4];
  const args = {
    q: r.floats(T * d),
    k: r.floats(T * d),
    v: r.floats(T * d),
    shape: [T, d],
    mask: 'causal',
  };
  const out = new Float32Array(T * d);
  const result = await worker.attention({ ...args, out });
  assert.equal(result.output.data, out);
  assert.deepEqual(result, engine.attention(args));
  await assert.rejects(worker.attention({ ...args, out: new Float32Array(3) }), (e) => {
    assert.ok(e instanceof AttnScopeError);
    assert.match(e.message, /attention: out has 3 elements, but the output \[6, 4\] has 24/);
    return true;
  });
  await assert.rejects(
    worker.attention({ ...args, out: [0] }),
    /attention: out must be a Float32Array, got an array/,
  );
});

test("linear's out stays on this side too", async () => {
  const r = rng(34);
  const args = { x: r.floats(6 * 4), shape: [6, 4], weight: r.floats(4 * 3) };
  const out = new Float32Array(6 * 3);
  const result = await worker.linear({ ...args, out });
  assert.equal(result.data, out);
  assert.deepEqual(result, engine.linear(args));
  await assert.rejects(
    worker.linear({ ...args, out: new Float32Array(4) }),
    /linear: out has 4 elements, but the output \[6, 3\] has 18/,
  );
});
