// Random cases against the double-precision reference: multi-head with W_O,
// every mask, batches, traced and fast paths, and attention() at every rank.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import { attendHead, maskFunction, selfAttentionReference } from 'attnscope/reference';
import { assertClose, rng } from './support.mjs';

const tol = { atol: 3e-5, rtol: 3e-5 };

function randomMask(kind, r, B, H, T) {
  const randomAdditive = (n) => {
    const data = r.floats(n, -2, 2);
    for (let i = 0; i < n; i++) if (r.next() < 0.2) data[i] = -Infinity;
    return data;
  };
  const randomAllowed = (n) => {
    const data = new Uint8Array(n);
    for (let i = 0; i < n; i++) data[i] = r.next() < 0.7 ? 1 : 0;
    for (let i = 0; i < T; i++) data[i] = 0; // first query row fully masked (T×T layout) or first rows
    return data;
  };
  const lengths = Array.from({ length: B }, (_, b) => (b === 0 ? T : r.int(1, T)));
  switch (kind) {
    case 'none':
      return { spec: 'none', ref: {} };
    case 'causal':
      return { spec: 'causal', ref: { causal: true } };
    case 'lengths':
      return { spec: { lengths }, ref: { lengths } };
    case 'additive TT': {
      const additive = randomAdditive(T * T);
      return { spec: { additive }, ref: { additive } };
    }
    case 'additive BTT': {
      const additive = randomAdditive(B * T * T);
      return { spec: { additive, additiveShape: [B, T, T] }, ref: { additive } };
    }
    case 'additive BHTT': {
      const additive = randomAdditive(B * H * T * T);
      return { spec: { additive, additiveShape: [B, H, T, T] }, ref: { additive } };
    }
    case 'allowed TT': {
      const allowed = randomAllowed(T * T);
      return { spec: { allowed, allowedShape: [T, T] }, ref: { allowed } };
    }
    case 'allowed BHTT nested booleans': {
      const flat = randomAllowed(B * H * T * T);
      const nested = Array.from({ length: B }, (_, b) =>
        Array.from({ length: H }, (_, h) =>
          Array.from({ length: T }, (_, i) =>
            Array.from({ length: T }, (_, j) => flat[((b * H + h) * T + i) * T + j] === 1),
          ),
        ),
      );
      return { spec: { allowed: nested }, ref: { allowed: flat } };
    }
    case 'causal + lengths + additive': {
      const additive = randomAdditive(T * T);
      return {
        spec: { causal: true, lengths, additive },
        ref: { causal: true, lengths, additive },
      };
    }
    default:
      throw new Error(kind);
  }
}

const kMaskKinds = [
  'none',
  'causal',
  'lengths',
  'additive TT',
  'additive BTT',
  'additive BHTT',
  'allowed TT',
  'allowed BHTT nested booleans',
  'causal + lengths + additive',
];

const kCases = [
  { B: 1, T: 1, C: 2, heads: 1, dk: 2, dv: 2 },
  { B: 2, T: 3, C: 4, heads: 2, dk: 2, dv: 3 },
  { B: 1, T: 5, C: 8, heads: 4, dk: 2, dv: 2, wo: 8 },
  { B: 3, T: 7, C: 6, heads: 3, dk: 4, dv: 1, wo: 5, bias: true },
  { B: 2, T: 17, C: 16, heads: 2, dk: 8, dv: 8, wo: 16, bias: true },
  { B: 1, T: 70, C: 12, heads: 3, dk: 4, dv: 5, wo: 7 },
];

let seed = 1;
for (const c of kCases) {
  for (const kind of kMaskKinds) {
    test(`selfAttention B=${c.B} T=${c.T} C=${c.C} H=${c.heads} d_k=${c.dk} d_v=${c.dv}${c.wo ? ` W_O→${c.wo}` : ''}, mask ${kind}`, () => {
      const r = rng(seed++);
      const { B, T, C, heads, dk, dv } = c;
      const x = r.floats(B * T * C, -2, 2);
      const wq = r.floats(C * heads * dk);
      const wk = r.floats(C * heads * dk);
      const wv = r.floats(C * heads * dv);
      const extra = {};
      if (c.bias)
        Object.assign(extra, {
          bq: r.floats(heads * dk),
          bk: r.floats(heads * dk),
          bv: r.floats(heads * dv),
        });
      if (c.wo)
        Object.assign(extra, {
          wo: r.floats(heads * dv * c.wo),
          bo: c.bias ? r.floats(c.wo) : undefined,
        });
      const scale = [true, false, 0.37][seed % 3];
      const mask = randomMask(kind, r, B, heads, T);
      const args = { x, shape: [B, T, C], wq, wk, wv, heads, ...extra, scale, mask: mask.spec };
      const factor = scale === true ? 1 / Math.sqrt(dk) : scale === false ? 1 : scale;
      const ref = selfAttentionReference({
        x,
        B,
        T,
        C,
        wq,
        wk,
        wv,
        ...extra,
        heads,
        factor,
        mask: maskFunction(mask.ref, B, heads, T),
      });

      const traced = engine.selfAttention({ ...args, trace: true });
      assert.deepEqual(traced.output.shape, [B, T, ref.cOut]);
      assertClose(traced.output.data, ref.output, { ...tol, what: 'traced output' });
      const t = traced.trace;
      assert.deepEqual(t.q.shape, [B, heads, T, dk]);
      assert.deepEqual(t.v.shape, [B, heads, T, dv]);
      assert.deepEqual(t.weights.shape, [B, heads, T, T]);
      assert.deepEqual(t.headOutputs.shape, [B, heads, T, dv]);
      assert.deepEqual(t.concat.shape, [B, T, heads * dv]);
      assertClose(t.q.data, ref.q, { ...tol, what: 'q' });
      assertClose(t.k.data, ref.k, { ...tol, what: 'k' });
      assertClose(t.v.data, ref.v, { ...tol, what: 'v' });
      assertClose(t.scores.data, ref.scores, { ...tol, what: 'scores' });
      assertClose(t.weights.data, ref.weights, { ...tol, what: 'weights' });
      assertClose(t.concat.data, ref.concat, { ...tol, what: 'concat' });
      for (let i = 0; i < ref.weights.length; i++) {
        if (t.masked.data[i] === -Infinity)
          assert.equal(t.weights.data[i], 0, 'masked weight is exactly 0');
      }
      assert.deepEqual(traced.fullyMasked.shape, [B, heads, T]);
      assert.deepEqual([...traced.fullyMasked.data], [...ref.fullyMasked]);
      assert.equal(
        traced.fullyMaskedCount,
        ref.fullyMasked.reduce((a, b) => a + b, 0),
      );

      const fast = engine.selfAttention({ ...args, trace: false });
      assert.equal(fast.trace, undefined);
      assert.deepEqual(fast.output.shape, traced.output.shape);
      assertClose(fast.output.data, ref.output, { ...tol, what: 'fast output' });
      assert.deepEqual([...fast.fullyMasked.data], [...ref.fullyMasked]);
    });
  }
}

test('selfAttention with shape [T, C] drops the leading B from every result shape', () => {
  const r = rng(99);
  const T = 4;
  const C = 6;
  const args = {
    x: r.floats(T * C),
    shape: [T, C],
    wq: r.floats(C * 6),
    wk: r.floats(C * 6),
    wv: r.floats(C * 4),
    heads: 2,
    wo: r.floats(4 * 3),
  };
  const res = engine.selfAttention(args);
  assert.deepEqual(res.output.shape, [T, 3]);
  assert.deepEqual(res.trace.q.shape, [2, T, 3]);
  assert.deepEqual(res.trace.weights.shape, [2, T, T]);
  assert.deepEqual(res.trace.concat.shape, [T, 4]);
  assert.deepEqual(res.fullyMasked.shape, [2, T]);
  const batched = engine.selfAttention({ ...args, shape: [1, T, C] });
  assert.deepEqual(batched.output.shape, [1, T, 3]);
  assert.deepEqual([...batched.output.data], [...res.output.data]);
});

test('selfAttention accepts nested arrays, Float64Array and plain flat arrays alike', () => {
  const r = rng(5);
  const x = r.floats(3 * 2);
  const w = r.floats(2 * 2);
  const nested = (a, rows, cols) =>
    Array.from({ length: rows }, (_, i) => Array.from(a.subarray(i * cols, (i + 1) * cols)));
  const a = engine.selfAttention({ x, shape: [3, 2], wq: w, wk: w, wv: w });
  const b = engine.selfAttention({
    x: nested(x, 3, 2),
    wq: nested(w, 2, 2),
    wk: Float64Array.from(w),
    wv: Array.from(w),
  });
  assert.deepEqual([...b.output.data], [...a.output.data]);
});

const kAttentionRanks = [
  { shape: [6, 4], dv: 4 },
  { shape: [3, 5, 4], dv: 2 },
  { shape: [2, 3, 9, 8], dv: 6 },
  { shape: [1, 1, 33, 16], dv: 16 },
];
for (const { shape, dv } of kAttentionRanks) {
  for (const [label, mask, trace] of [
    ['no mask, traced', 'none', true],
    ['causal, fast', 'causal', false],
    ['causal, traced', 'causal', true],
  ]) {
    test(`attention shape [${shape}] d_v=${dv}: ${label}`, () => {
      const r = rng(shape.length * 100 + dv);
      const d = shape[shape.length - 1];
      const T = shape[shape.length - 2];
      const groups = shape.slice(0, -2).reduce((a, b) => a * b, 1);
      const q = r.floats(groups * T * d, -3, 3);
      const k = r.floats(groups * T * d, -3, 3);
      const v = r.floats(groups * T * dv);
      const res = engine.attention({ q, k, v, shape, dv, mask, trace });
      const lead = shape.slice(0, -1);
      assert.deepEqual(res.output.shape, [...lead, dv]);
      assert.deepEqual(res.fullyMasked.shape, lead);
      const maskOf = mask === 'causal' ? (i, j) => (j > i ? -Infinity : 0) : () => 0;
      for (let g = 0; g < groups; g++) {
        const ref = attendHead(
          q.subarray(g * T * d, (g + 1) * T * d),
          k.subarray(g * T * d, (g + 1) * T * d),
          v.subarray(g * T * dv, (g + 1) * T * dv),
          T,
          d,
          dv,
          1 / Math.sqrt(d),
          maskOf,
        );
        assertClose(res.output.data.subarray(g * T * dv, (g + 1) * T * dv), ref.output, {
          ...tol,
          what: `output group ${g}`,
        });
        if (trace) {
          assert.deepEqual(res.trace.weights.shape, [...shape.slice(0, -1), T]);
          assertClose(res.trace.weights.data.subarray(g * T * T, (g + 1) * T * T), ref.weights, {
            ...tol,
            what: 'weights',
          });
          assertClose(res.trace.masked.data.subarray(g * T * T, (g + 1) * T * T), ref.masked, {
            ...tol,
            what: 'masked',
          });
        } else {
          assert.equal(res.trace, undefined);
        }
      }
    });
  }
}

test('attention stays exact for large logits (no overflow in softmax)', () => {
  const T = 5;
  const q = new Float32Array(T * 4).fill(10);
  const k = Float32Array.from({ length: T * 4 }, (_, i) => 9 + (i % 3));
  const v = rng(3).floats(T * 4);
  for (const trace of [true, false]) {
    const res = engine.attention({ q, k, v, shape: [T, 4], scale: false, trace });
    for (const x of res.output.data) assert.ok(Number.isFinite(x));
    const ref = attendHead(q, k, v, T, 4, 4, 1, () => 0);
    assertClose(res.output.data, ref.output, { ...tol, what: `output trace=${trace}` });
  }
});

test('typed-array views with an offset (subarray) are read from their offset', () => {
  const r = rng(41);
  const [T, d] = [5, 3];
  const pool = r.floats(3 + 3 * T * d + 2);
  const q = pool.subarray(3, 3 + T * d);
  const k = pool.subarray(3 + T * d, 3 + 2 * T * d);
  const v = pool.subarray(3 + 2 * T * d, 3 + 3 * T * d);
  const res = engine.attention({ q, k, v, shape: [T, d] });
  const ref = attendHead(q, k, v, T, d, d, 1 / Math.sqrt(d), () => 0);
  assertClose(res.output.data, ref.output, { ...tol, what: 'output from views' });
  const copy = engine.attention({ q: q.slice(), k: k.slice(), v: v.slice(), shape: [T, d] });
  assert.deepEqual([...res.output.data], [...copy.output.data]);
});

test('attention writes into out when given one: same values, same array, inputs may alias it', () => {
  const r = rng(43);
  const shape = [2, 3, 7, 4];
  const n = 2 * 3 * 7 * 4;
  const [q, k, v] = [r.floats(n), r.floats(n), r.floats(n)];
  for (const [mask, trace] of [
    ['none', false],
    ['causal', false],
    ['causal', true],
  ]) {
    const fresh = engine.attention({ q, k, v, shape, mask, trace });
    const out = new Float32Array(n).fill(NaN);
    const res = engine.attention({ q, k, v, shape, mask, trace, out });
    assert.equal(res.output.data, out, "output.data is the caller's array");
    assert.deepEqual(res.output.shape, fresh.output.shape);
    assert.deepEqual([...out], [...fresh.output.data], `mask ${mask}, trace ${trace}`);
    assert.deepEqual([...res.fullyMasked.data], [...fresh.fullyMasked.data]);
    if (trace) assert.deepEqual([...res.trace.weights.data], [...fresh.trace.weights.data]);
  }
  // out may be one of the inputs: they are read before it is written.
  const qCopy = q.slice();
  const res = engine.attention({ q: qCopy, k, v, shape, out: qCopy });
  assert.equal(res.output.data, qCopy);
  assert.deepEqual([...qCopy], [...engine.attention({ q, k, v, shape }).output.data]);
});

test('a call that fails leaves out untouched', () => {
  const out = new Float32Array(8).fill(7);
  assert.throws(
    () =>
      engine.attention({
        q: [1, NaN, 0, 1, 0, 1, 1, 0],
        k: new Float32Array(8),
        v: new Float32Array(8),
        shape: [4, 2],
        out,
      }),
    /non-finite/,
  );
  assert.deepEqual([...out], new Array(8).fill(7));
});
