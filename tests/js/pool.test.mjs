// attnscope/worker's pool: attention split by batch or head across worker
// threads must give exactly the single engine's result, errors included.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { createAttnScopePool, AttnScopeError } from 'attnscope/worker';
// The splitter itself, from the built package, to check that calls really are split.
import { splitAttention } from '../../dist/attention-split.js';

import { engine } from './engine.mjs';
import { rng } from './support.mjs';

// minSplitFlops 0: even the small inputs below are split.
// threads: 1 keeps the pool of single-thread workers that copies and splits
// (Node would otherwise run it as one threaded engine: threads.test.mjs).
const pool = createAttnScopePool({ workers: 3, minSplitFlops: 0, threads: 1 });
after(() => pool.terminate());

function inputs(seed, [B, H, T, d], dv = d) {
  const r = rng(seed);
  const units = B * H;
  return { q: r.floats(units * T * d), k: r.floats(units * T * d), v: r.floats(units * T * dv) };
}

test('ready reports every worker and the engine it runs', async () => {
  assert.deepEqual(await pool.ready, {
    version: engine.version,
    simdArch: engine.simdArch,
    threads: 1,
    workers: 3,
  });
  assert.equal(pool.size, 3);
  assert.equal((await pool.memoryUsage()).length, 3);
});

test('split calls equal the single engine bit for bit, for every mask kind and head or batch count', async () => {
  const T = 13;
  const cases = [
    // Heads of one sequence: rank 3 and rank 4, more and fewer heads than workers.
    { shape: [8, T, 8], mask: 'none' },
    { shape: [1, 5, T, 8], mask: 'causal', dv: 3 },
    { shape: [2, T, 4], mask: { lengths: [9] }, scale: 0.7 },
    // Whole sequences of a batch, with every mask that has a batch or head dimension.
    { shape: [4, 3, T, 8], mask: { causal: true, lengths: [13, 1, 7, 0] } },
    { shape: [5, 2, T, 4], mask: { additive: 'B,H,T,T' } },
    { shape: [5, 2, T, 4], mask: { additive: 'B,T,T', allowed: 'T,T' } },
    { shape: [1, 4, T, 4], mask: { allowed: 'B,H,T,T', additive: 'B,T,T' } },
    { shape: [2, 1, T, 16], mask: { allowed: 'B,T,T' }, scale: false },
  ];
  for (const [i, c] of cases.entries()) {
    const dims = c.shape.length === 4 ? c.shape : [1, ...c.shape];
    const [B, H] = dims;
    const r = rng(100 + i);
    const maskTensor = (kind, allowed) => {
      const n = { 'T,T': T * T, 'B,T,T': B * T * T, 'B,H,T,T': B * H * T * T }[kind];
      // A few -Infinity or false entries, everything else finite or true.
      if (allowed) return Uint8Array.from({ length: n }, () => (r.floats(1)[0] > -0.6 ? 1 : 0));
      return Float32Array.from(r.floats(n), (x) => (x < -0.8 ? -Infinity : x));
    };
    let mask = c.mask;
    if (typeof mask === 'object') {
      mask = { ...mask };
      if (mask.additive) mask.additive = maskTensor(mask.additive, false);
      if (mask.allowed) mask.allowed = maskTensor(mask.allowed, true);
    }
    const dv = c.dv ?? c.shape.at(-1);
    const args = { ...inputs(i, dims, dv), shape: c.shape, mask, scale: c.scale, dv: c.dv };
    const parts = splitAttention(args, pool.size, 0);
    assert.ok(parts && parts.parts.length >= 2, `case ${i} is split`);
    for (const trace of [false, true]) {
      const expected = engine.attention({ ...args, trace });
      assert.deepEqual(
        await pool.attention({ ...args, trace }),
        expected,
        `case ${i}, trace ${trace}`,
      );
    }
    // The pool moves only its own slices: the caller's buffers stay whole.
    assert.equal(args.q.length, dims[0] * dims[1] * T * dims[3]);
  }
});

test('the split follows batches when there are several, else heads, in near-equal contiguous parts', () => {
  const heads = splitAttention({ ...inputs(1, [1, 8, 4, 2]), shape: [8, 4, 2] }, 3, 0);
  assert.equal(heads.axis, 0);
  assert.deepEqual(
    heads.parts.map((p) => p.args.shape),
    [
      [3, 4, 2],
      [3, 4, 2],
      [2, 4, 2],
    ],
  );
  assert.equal(heads.parts[1].args.q.length, 3 * 4 * 2);

  const batches = splitAttention(
    { ...inputs(2, [3, 2, 4, 2]), shape: [3, 2, 4, 2], mask: { lengths: [4, 2, 1] } },
    2,
    0,
  );
  assert.equal(batches.axis, 0);
  assert.deepEqual(
    batches.parts.map((p) => p.args.shape),
    [
      [2, 2, 4, 2],
      [1, 2, 4, 2],
    ],
  );
  assert.deepEqual(
    batches.parts.map((p) => p.args.mask.lengths),
    [[4, 2], [1]],
  );

  const headsOfOne = splitAttention({ ...inputs(3, [1, 4, 4, 2]), shape: [1, 4, 4, 2] }, 4, 0);
  assert.equal(headsOfOne.axis, 1);
  assert.equal(headsOfOne.parts.length, 4);
});

test('small, unsplittable or invalid calls stay whole', () => {
  const args = { ...inputs(4, [1, 8, 64, 64]), shape: [8, 64, 64] };
  // 2·8·64²·128 = 8.4 MFLOP: below a 1e7 threshold, above a 1e6 one.
  assert.equal(splitAttention(args, 2, 1e7), undefined);
  assert.ok(splitAttention(args, 2, 1e6));
  // A causal call does half the work: 4.2 MFLOP.
  assert.ok(splitAttention(args, 2, 5e6));
  assert.equal(splitAttention({ ...args, mask: 'causal' }, 2, 5e6), undefined);
  assert.equal(
    splitAttention({ ...args, mask: { causal: true, lengths: [64] } }, 2, 5e6),
    undefined,
  );
  assert.equal(splitAttention(args, 1, 0), undefined, 'one worker');
  assert.equal(
    splitAttention({ ...args, shape: [64, 8 * 64] }, 2, 0),
    undefined,
    'one head, no batch',
  );
  assert.equal(splitAttention({ ...args, q: Array.from(args.q) }, 2, 0), undefined, 'plain arrays');
  assert.equal(splitAttention({ ...args, shape: [8, 64, 63] }, 2, 0), undefined, 'sizes disagree');
  assert.equal(splitAttention({ ...args, k: args.k.subarray(1) }, 2, 0), undefined, 'k too short');
  const broadcast = { additive: new Float32Array(64 * 64), additiveShape: [1, 1, 64, 64] };
  assert.equal(splitAttention({ ...args, mask: broadcast }, 2, 0), undefined, 'broadcast mask');
  assert.equal(
    splitAttention({ ...args, mask: { lengths: [1, 2] } }, 2, 0),
    undefined,
    'lengths of the wrong batch',
  );
});

test('an error in one part is the single engine error, and the pool keeps working', async () => {
  const shape = [1, 4, 6, 4];
  const args = { ...inputs(5, shape), shape };
  args.q[3 * 6 * 4 + 5] = NaN; // in the last head, so in the last part
  let expected;
  try {
    engine.attention(args);
  } catch (e) {
    expected = e;
  }
  assert.ok(expected instanceof AttnScopeError);
  await assert.rejects(pool.attention(args), (e) => {
    assert.ok(e instanceof AttnScopeError);
    assert.equal(e.message, expected.message);
    return true;
  });
  args.q[3 * 6 * 4 + 5] = 0.5;
  assert.deepEqual(await pool.attention(args), engine.attention(args));
});

test('the other methods run whole on a worker and give the engine result', async () => {
  const r = rng(6);
  const x = r.floats(5 * 4);
  const weight = r.floats(4 * 3);
  const results = await Promise.all(
    [1, 2, 3, 4].map(() => pool.linear({ x, shape: [5, 4], weight })),
  );
  for (const result of results)
    assert.deepEqual(result, engine.linear({ x, shape: [5, 4], weight }));
});

test('pool options are checked', () => {
  for (const workers of [0, 1.5, 65, '2']) {
    assert.throws(
      () => createAttnScopePool({ workers }),
      (e) => {
        assert.ok(e instanceof AttnScopeError);
        assert.match(e.message, /workers must be an integer from 1 to 64/);
        return true;
      },
    );
  }
  assert.throws(
    () => createAttnScopePool({ minSplitFlops: -1 }),
    /minSplitFlops must be a non-negative number/,
  );
});

test('transfer moves the buffers of a call that runs whole, and a split call leaves them intact', async () => {
  const r = rng(7);
  const x = r.floats(5 * 4);
  const weight = r.floats(4 * 3);
  const expected = engine.linear({ x, shape: [5, 4], weight });
  const moved = x.slice();
  assert.deepEqual(
    await pool.linear({ x: moved, shape: [5, 4], weight }, [moved.buffer]),
    expected,
  );
  assert.equal(moved.length, 0, 'x was moved to the worker');

  const shape = [4, 6, 4];
  const args = { ...inputs(8, [1, ...shape]), shape };
  const single = engine.attention(args);
  assert.ok(splitAttention(args, pool.size, 0), 'this call is split');
  assert.deepEqual(await pool.attention(args, [args.q.buffer]), single);
  assert.equal(args.q.length, 4 * 6 * 4, 'a split call only reads q');
});

test("linear's out receives the result from a worker, and a call that fails leaves it untouched", async () => {
  const r = rng(35);
  const args = { x: r.floats(5 * 4), shape: [5, 4], weight: r.floats(4 * 2) };
  const out = new Float32Array(5 * 2);
  const result = await pool.linear({ ...args, out });
  assert.equal(result.data, out);
  assert.deepEqual(result, engine.linear(args));
  const untouched = new Float32Array(5 * 2).fill(7);
  await assert.rejects(
    pool.linear({ ...args, weight: r.floats(4 * 2).fill(NaN), out: untouched }),
    /linear: weight has a non-finite value/,
  );
  assert.ok(untouched.every((x) => x === 7));
});

test('out receives the whole result of a split call, and a call that fails leaves it untouched', async () => {
  const shape = [1, 4, 6, 4];
  const args = { ...inputs(9, shape), shape, mask: 'causal' };
  assert.ok(splitAttention(args, pool.size, 0), 'this call is split');
  const out = new Float32Array(4 * 6 * 4);
  const result = await pool.attention({ ...args, out });
  assert.equal(result.output.data, out);
  assert.deepEqual(result, engine.attention(args));

  const untouched = new Float32Array(4 * 6 * 4).fill(7);
  const bad = { ...args, q: args.q.slice() };
  bad.q[5] = NaN;
  await assert.rejects(
    pool.attention({ ...bad, out: untouched }),
    /attention: q has a non-finite value/,
  );
  assert.ok(untouched.every((x) => x === 7));
});

test('the split reads honest lengths and own options only', async () => {
  const [B, H, T, d] = [2, 2, 4, 2];
  const n = B * H * T * d;
  const q = Float32Array.from({ length: n }, (_, i) => Math.sin(i));
  const args = { q, k: q.map((x) => -x), v: q.map((x) => x * 2), shape: [B, H, T, d] };
  const clean = engine.attention(args);
  // A q claiming half its length: the pool splits by the real one, like the engine.
  const lying = Object.defineProperty(q.slice(), 'length', { value: n / 2 });
  assert.deepEqual((await pool.attention({ ...args, q: lying })).output, clean.output);
  // Inherited mask fields are ignored when splitting too.
  Object.defineProperty(Object.prototype, 'lengths', {
    value: [1, 1],
    configurable: true,
    writable: true,
  });
  try {
    assert.deepEqual(
      splitAttention({ ...args, mask: {} }, 2, 0).parts.map((p) =>
        Object.hasOwn(p.args.mask, 'lengths'),
      ),
      [false, false],
    );
    assert.deepEqual((await pool.attention({ ...args, mask: {} })).output, clean.output);
  } finally {
    delete Object.prototype.lengths;
  }
});
