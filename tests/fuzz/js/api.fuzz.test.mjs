// Randomized fuzzing of the package API (in-thread and through the worker)
// with fast-check: arguments of every type and shape, near-valid calls with
// one field broken. Each call returns a finite result or throws
// AttnScopeError with a message; nothing else may escape, and afterwards the
// engine answers a known call correctly with the wasm heap where it was.
// Runs per property: FUZZ_JS_RUNS (default 300).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';

import { AttnScopeError, createAttnScope } from 'attnscope';
import { attendHead, maskFunction } from 'attnscope/reference';
import { createAttnScopePool, createAttnScopeWorker } from 'attnscope/worker';
import { seed001, I2 } from '../../js/support.mjs';

const runs = Number(process.env.FUZZ_JS_RUNS ?? 300);
const engine = await createAttnScope();
const worker = createAttnScopeWorker();
// minSplitFlops 0: every splittable call is split, however small.
const pool = createAttnScopePool({ workers: 3, minSplitFlops: 0 });
after(() => {
  worker.terminate();
  pool.terminate();
});

const seed001Output = [1.660477, 2.660477, 2.339523, 3.339523];

// Sizes stay small or are rejected before any allocation (a legal 1 GiB
// request would be slow, not wrong).
const size = fc.oneof(
  { weight: 8, arbitrary: fc.integer({ min: 1, max: 12 }) },
  fc.constantFrom(0, -1, 1.5, NaN, Infinity, 2 ** 31, 2 ** 53, '3', null),
);
const number = fc.oneof(
  fc.double({ noDefaultInfinity: false }),
  fc.constantFrom(NaN, Infinity, -Infinity, -0, 3.4e38, -3.4e38, 1e-45, 1e39),
  fc.integer({ min: -4, max: 4 }),
);
const flat = fc.oneof(
  fc.float32Array({ maxLength: 80 }),
  fc.array(number, { maxLength: 40 }),
  fc.array(fc.array(number, { maxLength: 6 }), { maxLength: 6 }),
  fc.uint8Array({ maxLength: 40 }),
);
const anyValue = fc.oneof(
  flat,
  number,
  size,
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.constant(undefined),
  fc.constant(null),
  fc.object({ maxDepth: 1 }),
);
const shape = fc.oneof(fc.array(size, { minLength: 0, maxLength: 5 }), anyValue);
const mask = fc.oneof(
  fc.constantFrom('none', 'causal', 'future', '', undefined, null, 3),
  fc.record(
    {
      causal: fc.oneof(fc.boolean(), anyValue),
      lengths: fc.oneof(fc.array(size, { maxLength: 4 }), anyValue),
      additive: fc.oneof(flat, anyValue),
      additiveShape: shape,
      allowed: fc.oneof(flat, anyValue),
      allowedShape: shape,
    },
    { requiredKeys: [] },
  ),
);
const common = {
  shape,
  scale: fc.oneof(fc.boolean(), number, anyValue),
  mask,
  trace: fc.oneof(fc.boolean(), anyValue),
};
const rec = (fields) => fc.record(fields, { requiredKeys: [] });
const calls = fc.oneof(
  rec({
    x: flat,
    wq: flat,
    wk: flat,
    wv: flat,
    bq: flat,
    wo: flat,
    bo: flat,
    heads: size,
    ...common,
  }).map((a) => ['selfAttention', a]),
  rec({ q: flat, k: flat, v: flat, dv: size, ...common }).map((a) => ['attention', a]),
  rec({ length: size, dim: size, base: number }).map((a) => ['positionalEncoding', a]),
  rec({ x: flat, shape, weight: flat, bias: flat, outDim: size }).map((a) => ['linear', a]),
  rec({ x: flat, shape, gamma: flat, beta: flat, eps: number }).map((a) => ['layerNorm', a]),
  rec({
    x: flat,
    shape,
    w1: flat,
    b1: flat,
    w2: flat,
    b2: flat,
    hidden: size,
    activation: fc.constantFrom('relu', 'gelu', 'tanh', 1),
  }).map((a) => ['feedForward', a]),
  rec({ a: flat, b: flat, shape }).map((a) => ['residualAdd', a]),
  rec({
    x: flat,
    shape,
    attention: rec({ wq: flat, wk: flat, wv: flat, wo: flat, heads: size }),
    ff1: rec({ weight: flat, bias: flat }),
    ff2: rec({ weight: flat }),
    hidden: size,
    normFirst: anyValue,
    eps: number,
    mask,
  }).map((a) => ['transformerBlock', a]),
  // Near-valid: seed 001 with one argument replaced.
  fc
    .tuple(
      fc.constantFrom('x', 'wq', 'wk', 'wv', 'wo', 'heads', 'shape', 'mask', 'scale', 'trace'),
      anyValue,
    )
    .map(([k, v]) => ['selfAttention', { ...seed001, [k]: v }]),
);

function checkResult(method, r) {
  const outputs =
    method === 'selfAttention' || method === 'attention' || method === 'transformerBlock'
      ? [r.output]
      : [r];
  for (const t of outputs) {
    assert.ok(t.data instanceof Float32Array, `${method}: output is not a Float32Array`);
    assert.equal(
      t.data.length,
      t.shape.reduce((a, b) => a * b, 1),
      `${method}: data length vs shape`,
    );
    assert.ok(t.data.every(Number.isFinite), `${method}: non-finite output`);
  }
}

function checkError(method, e) {
  assert.ok(
    e instanceof AttnScopeError,
    `${method} threw ${e?.constructor?.name}: ${e?.message}\n${e?.stack}`,
  );
  assert.ok(typeof e.message === 'string' && e.message.length > 5, `${method}: empty message`);
}

test('in-thread engine: any arguments give a finite result or an AttnScopeError', () => {
  const heapBefore = engine.memoryUsage().heapInUse;
  let accepted = 0;
  fc.assert(
    fc.property(calls, ([method, args]) => {
      try {
        checkResult(method, engine[method](args));
        accepted++;
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        checkError(method, e);
      }
    }),
    { numRuns: runs * 10 },
  );
  console.log(`# ${runs * 10} random calls, ${accepted} accepted`);
  const r = engine.selfAttention(seed001);
  r.output.data.forEach((v, i) => assert.ok(Math.abs(v - seed001Output[i]) < 1e-5));
  assert.equal(engine.memoryUsage().heapInUse, heapBefore, 'the wasm heap changed');
});

test('worker: any arguments resolve to a finite result or reject with AttnScopeError', async () => {
  await fc.assert(
    fc.asyncProperty(calls, async ([method, args]) => {
      try {
        checkResult(method, await worker[method](args));
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        checkError(method, e);
      }
    }),
    { numRuns: runs * 2 },
  );
  // Functions and symbols cannot be cloned to the worker: refused, worker alive.
  await assert.rejects(worker.selfAttention({ ...seed001, wq: () => 1 }), AttnScopeError);
  await assert.rejects(worker.selfAttention({ ...seed001, heads: Symbol('h') }), AttnScopeError);
  const r = await worker.selfAttention(seed001);
  r.output.data.forEach((v, i) => assert.ok(Math.abs(v - seed001Output[i]) < 1e-5));
});

// Attention calls the pool can split (flat q, k, v with a [B, H, T, d] or
// [H, T, d] shape), with masks of every kind and shape, extreme values, and
// now and then one thing wrong: the pool must give exactly what one engine
// gives, result or error message.
const splittable = fc
  .record({
    batch: fc.integer({ min: 1, max: 4 }),
    heads: fc.integer({ min: 1, max: 5 }),
    length: fc.integer({ min: 1, max: 9 }),
    d: fc.integer({ min: 1, max: 6 }),
    dv: fc.integer({ min: 1, max: 6 }),
    rank3: fc.boolean(),
    values: fc.constantFrom('normal', 'huge', 'tiny'),
    mask: fc.constantFrom('none', 'causal', 'lengths', 'additive', 'allowed', 'both'),
    maskShape: fc.constantFrom('T,T', 'B,T,T', 'B,H,T,T'),
    scale: fc.oneof(fc.boolean(), fc.double({ min: -1e8, max: 1e8, noNaN: true })),
    trace: fc.boolean(),
    broken: fc.constantFrom(null, null, null, 'nan', 'lengths', 'short-v'),
    seed: fc.integer(),
  })
  .map((c) => {
    const B = c.rank3 ? 1 : c.batch;
    const [H, T] = [c.heads, c.length];
    let state = c.seed >>> 0;
    const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
    const magnitude = { normal: 1, huge: 1e18, tiny: 1e-20 }[c.values];
    const floats = (n) => Float32Array.from({ length: n }, () => next() * magnitude);
    const q = floats(B * H * T * c.d);
    const k = floats(B * H * T * c.d);
    const v = floats(B * H * T * c.dv - (c.broken === 'short-v' ? 1 : 0));
    const maskSize = { 'T,T': T * T, 'B,T,T': B * T * T, 'B,H,T,T': B * H * T * T }[c.maskShape];
    const additive = () =>
      Float32Array.from({ length: maskSize }, () => (next() < -0.6 ? -Infinity : next() * 3));
    const allowed = () => Uint8Array.from({ length: maskSize }, () => (next() > -0.7 ? 1 : 0));
    const lengths = Array.from({ length: B + (c.broken === 'lengths' ? 1 : 0) }, () =>
      Math.floor(((next() + 1) / 2) * (T + 1)),
    );
    const mask = {
      none: 'none',
      causal: 'causal',
      lengths: { lengths, causal: c.scale === true },
      additive: { additive: additive() },
      allowed: { allowed: allowed() },
      both: { additive: additive(), allowed: allowed(), lengths },
    }[c.mask];
    if (c.broken === 'nan') q[q.length - 1] = NaN;
    const shape = c.rank3 ? [H, T, c.d] : [B, H, T, c.d];
    return {
      call: { q, k, v, shape, dv: c.dv, mask, scale: c.scale, trace: c.trace },
      values: c.values,
      broken: c.broken,
    };
  });

// The double-precision reference (attnscope/reference) of a valid call.
function referenceAttention({ q, k, v, shape, dv, mask, scale }) {
  const [B, H, T, d] = shape.length === 3 ? [1, ...shape] : shape;
  const factor = scale === true ? 1 / Math.sqrt(d) : scale === false ? 1 : scale;
  const spec = mask === 'none' ? {} : mask === 'causal' ? { causal: true } : mask;
  const maskOf = maskFunction(spec, B, H, T);
  const output = new Float64Array(B * H * T * dv);
  for (let b = 0; b < B; b++) {
    for (let h = 0; h < H; h++) {
      const head = b * H + h;
      const r = attendHead(
        q.subarray(head * T * d, (head + 1) * T * d),
        k.subarray(head * T * d, (head + 1) * T * d),
        v.subarray(head * T * dv, (head + 1) * T * dv),
        T,
        d,
        dv,
        factor,
        maskOf(b, h),
      );
      output.set(r.output, head * T * dv);
    }
  }
  return output;
}

test('attention on valid random calls matches the double-precision reference', () => {
  let compared = 0;
  fc.assert(
    fc.property(splittable, ({ call, values, broken }) => {
      // Moderate values and scales only: at 1e18 or a scale of 1e8 the float32
      // scores themselves differ from the doubles' by more than the weights can bear.
      if (broken || values === 'huge') return;
      const scale =
        typeof call.scale === 'number' ? Math.max(-4, Math.min(4, call.scale)) : call.scale;
      // A nonzero scale that float32 rounds to 0 is refused by name (the other properties check that).
      if (typeof scale === 'number' && scale !== 0 && Math.fround(scale) === 0) return;
      const args = { ...call, scale };
      const got = engine.attention(args).output.data;
      const want = referenceAttention(args);
      want.forEach((w, i) =>
        assert.ok(
          Math.abs(got[i] - w) <= 1e-4 + 1e-4 * Math.abs(w),
          `output[${i}]: got ${got[i]}, expected ${w}`,
        ),
      );
      compared++;
    }),
    { numRuns: runs },
  );
  console.log(`# ${compared} calls compared with the reference`);
  assert.ok(compared > runs / 10, `only ${compared} of ${runs} calls were valid enough to compare`);
});

test('pool: split attention equals the single engine, result or error', async () => {
  await fc.assert(
    fc.asyncProperty(splittable, async ({ call: args }) => {
      let expected;
      let expectedError;
      try {
        expected = engine.attention(args);
      } catch (e) {
        expectedError = e;
      }
      if (expectedError) {
        await assert.rejects(pool.attention(args), (e) => {
          assert.ok(e instanceof AttnScopeError);
          assert.equal(e.message, expectedError.message);
          return true;
        });
      } else {
        assert.deepEqual(await pool.attention(args), expected);
      }
    }),
    { numRuns: runs },
  );
});

// Integers past every bound (2^32 and beyond, the wrap points of a 32-bit
// size_t) and holes: always an AttnScopeError naming the argument, never a
// call run with a wrapped value.
const hugeInt = fc.oneof(
  fc.integer({ min: 2 ** 30 + 1, max: 2 ** 53 }),
  fc.constantFrom(2 ** 32, 2 ** 32 + 1, 2 ** 32 + 2, 2 ** 53, 1e20),
);
test('integers beyond their bounds and holes are refused by name', () => {
  const heapBefore = engine.memoryUsage().heapInUse;
  const q = {
    q: new Float32Array(16),
    k: new Float32Array(16),
    v: new Float32Array(16),
    shape: [2, 1, 4, 2],
  };
  fc.assert(
    fc.property(hugeInt, fc.integer({ min: 0, max: 5 }), (n, where) => {
      const calls = [
        ['heads', () => engine.selfAttention({ ...seed001, heads: n })],
        ['mask.lengths', () => engine.attention({ ...q, mask: { lengths: [1, n] } })],
        ['shape', () => engine.attention({ ...q, shape: [n, 1, 4, 2] })],
        ['dv', () => engine.attention({ ...q, dv: n })],
        ['length', () => engine.positionalEncoding({ length: n, dim: 2 })],
        [
          'mask.lengths',
          () => engine.attention({ ...q, mask: { lengths: where % 2 ? [, 1] : [1, ,] } }),
        ],
      ];
      const [name, call] = calls[where];
      assert.throws(call, (e) => {
        checkError(name, e);
        assert.ok(e.message.includes(name.split('.').pop()), `${name}: ${e.message}`);
        return true;
      });
    }),
    { numRuns: runs },
  );
  assert.equal(engine.memoryUsage().heapInUse, heapBefore, 'the wasm heap changed');
});

// Option names set on Object.prototype: results are exactly those of a clean run.
const optionNames = fc.constantFrom(
  'mask',
  'lengths',
  'additive',
  'allowed',
  'causal',
  'trace',
  'scale',
  'heads',
  'dv',
  'out',
  'bq',
  'wo',
  'eps',
  'gamma',
  'beta',
  'shape',
  'normFirst',
);
test('a polluted Object.prototype changes no result', () => {
  const q = {
    q: Float32Array.from({ length: 16 }, (_, i) => i / 8),
    k: Float32Array.from({ length: 16 }, (_, i) => 1 - i / 16),
    v: Float32Array.from({ length: 16 }, (_, i) => i),
    shape: [2, 1, 4, 2],
  };
  const clean = {
    attention: engine.attention(q),
    selfAttention: engine.selfAttention(seed001),
    layerNorm: engine.layerNorm({ x: I2 }),
  };
  fc.assert(
    fc.property(optionNames, anyValue, (key, value) => {
      Object.defineProperty(Object.prototype, key, { value, configurable: true, writable: true });
      try {
        assert.deepEqual(engine.attention(q), clean.attention);
        assert.deepEqual(engine.selfAttention(seed001), clean.selfAttention);
        assert.deepEqual(engine.layerNorm({ x: I2 }), clean.layerNorm);
      } finally {
        delete Object.prototype[key];
      }
    }),
    { numRuns: runs },
  );
});
