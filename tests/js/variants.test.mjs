// The attention variants through the package: grouped kv heads, a KV cache
// (Tq < Tk), RoPE, ALiBi and a given bias, window and sinks, on the traced and
// the fast path, against the double-precision reference (attnscope/reference).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import { assertClose, rng } from './support.mjs';
import { variantAttention } from 'attnscope/reference';

const tol = { atol: 2e-5, rtol: 2e-5 };

/** Random q, k, v for dims, and the engine's arguments for them. */
function make(seed, dims) {
  const { B, H, Hkv, Tq, Tk, d, dv } = dims;
  const r = rng(seed);
  return {
    q: r.floats(B * H * Tq * d),
    k: r.floats(B * Hkv * Tk * d),
    v: r.floats(B * Hkv * Tk * dv),
    shape: [B, H, Tq, d],
    kvShape: [B, Hkv, Tk, d],
  };
}

/** Engine options → reference options. */
function referenceOptions(args, dims) {
  const mask = typeof args.mask === 'object' ? args.mask : {};
  const out = {
    causal: args.mask === 'causal' || mask.causal === true,
    lengths: mask.lengths,
    window: mask.window,
    sinks: mask.sinks,
    ropeBase: args.rope ? (args.rope.base ?? 10000) : undefined,
    alibi: args.bias === 'alibi' || args.bias?.alibi === true,
  };
  if (typeof args.scale === 'number') out.factor = args.scale;
  if (args.bias?.values) {
    out.biasValues = args.bias.values;
    out.biasShape = args.bias.shape ?? [dims.H, dims.Tq, dims.Tk];
  }
  if (mask.additive) {
    const { B, H, Tq, Tk } = dims;
    out.additive = (b, h, i, j) => mask.additive[((b * H + h) * Tq + i) * Tk + j];
    assert.equal(mask.additive.length, B * H * Tq * Tk);
  }
  return out;
}

/** Checks both paths against the reference; returns the traced result. */
function checkBothPaths(args, dims, what) {
  const ref = variantAttention(args.q, args.k, args.v, dims, referenceOptions(args, dims));
  const traced = engine.attention({ ...args, trace: true });
  const fast = engine.attention({ ...args, trace: false });
  const { B, H, Tq, dv } = dims;
  assert.deepEqual(traced.output.shape, [B, H, Tq, dv], what);
  assertClose(traced.output.data, ref.output, { ...tol, what: `${what}: traced output` });
  assertClose(fast.output.data, ref.output, { ...tol, what: `${what}: fast output` });
  assertClose(traced.trace.weights.data, ref.weights, { ...tol, what: `${what}: weights` });
  assert.equal(fast.trace, undefined);
  for (const x of [traced, fast])
    assert.ok(x.output.data.every(Number.isFinite), `${what}: finite output`);
  return { traced, ref };
}

const kCases = [
  // GQA, MQA, MHA; Tq = Tk and a KV cache (Tq < Tk); lengths around 64-wide tiles.
  { name: 'GQA', dims: { B: 2, H: 4, Hkv: 2, Tq: 9, Tk: 9, d: 8, dv: 8 }, args: {} },
  {
    name: 'MQA causal',
    dims: { B: 1, H: 3, Hkv: 1, Tq: 7, Tk: 7, d: 4, dv: 6 },
    args: { mask: 'causal' },
  },
  {
    name: 'KV cache causal',
    dims: { B: 2, H: 2, Hkv: 2, Tq: 5, Tk: 70, d: 8, dv: 4 },
    args: { mask: { causal: true } },
  },
  {
    name: 'decode step GQA',
    dims: { B: 1, H: 8, Hkv: 2, Tq: 1, Tk: 130, d: 16, dv: 16 },
    args: { mask: 'causal' },
  },
  { name: 'rope', dims: { B: 1, H: 2, Hkv: 2, Tq: 12, Tk: 12, d: 8, dv: 8 }, args: { rope: {} } },
  {
    name: 'rope base 500 KV cache',
    dims: { B: 2, H: 4, Hkv: 1, Tq: 3, Tk: 66, d: 6, dv: 5 },
    args: { rope: { base: 500 }, mask: 'causal' },
  },
  {
    name: 'alibi H=4',
    dims: { B: 1, H: 4, Hkv: 4, Tq: 10, Tk: 10, d: 4, dv: 4 },
    args: { bias: 'alibi' },
  },
  {
    name: 'alibi H=6 causal',
    dims: { B: 2, H: 6, Hkv: 3, Tq: 8, Tk: 8, d: 4, dv: 4 },
    args: { bias: { alibi: true }, mask: 'causal' },
  },
  {
    name: 'window causal',
    dims: { B: 1, H: 2, Hkv: 1, Tq: 80, Tk: 80, d: 8, dv: 8 },
    args: { mask: { causal: true, window: 7 } },
  },
  {
    name: 'window both sides + sinks',
    dims: { B: 1, H: 2, Hkv: 2, Tq: 20, Tk: 20, d: 4, dv: 4 },
    args: { mask: { window: 3, sinks: 2 } },
  },
  {
    name: 'window sinks causal KV cache',
    dims: { B: 2, H: 2, Hkv: 1, Tq: 4, Tk: 140, d: 8, dv: 8 },
    args: { mask: { causal: true, window: 65, sinks: 4 } },
  },
  {
    name: 'everything with lengths and a custom scale',
    dims: { B: 2, H: 4, Hkv: 2, Tq: 6, Tk: 11, d: 8, dv: 3 },
    args: {
      rope: { base: 100 },
      bias: 'alibi',
      mask: { causal: true, window: 4, sinks: 1, lengths: [11, 8] },
      scale: 0.4,
    },
  },
];

for (const [i, c] of kCases.entries()) {
  test(`variants against the reference, traced and fast: ${c.name}`, () => {
    const args = { ...make(10 + i, c.dims), ...c.args, dv: c.dims.dv };
    checkBothPaths(args, c.dims, c.name);
  });
}

test('a given bias (H, Tq, Tk) and (B, H, Tq, Tk), with ALiBi and an additive mask', () => {
  const dims = { B: 2, H: 2, Hkv: 1, Tq: 4, Tk: 9, d: 4, dv: 4 };
  const r = rng(3);
  const { B, H, Tq, Tk } = dims;
  const shared = r.floats(H * Tq * Tk, -2, 2);
  const perBatch = r.floats(B * H * Tq * Tk, -2, 2);
  const additive = Float32Array.from(r.floats(B * H * Tq * Tk), (x) => (x < -0.7 ? -Infinity : x));
  const cases = [
    { bias: { values: shared } },
    { bias: { values: perBatch, shape: [B, H, Tq, Tk] } },
    { bias: { alibi: true, values: shared }, mask: { additive, additiveShape: [B, H, Tq, Tk] } },
  ];
  for (const [n, extra] of cases.entries()) {
    const args = { ...make(20 + n, dims), ...extra };
    const { traced, ref } = checkBothPaths(args, dims, `bias case ${n}`);
    assert.deepEqual(traced.trace.bias.shape, [B, H, Tq, Tk]);
    assertClose(traced.trace.bias.data, ref.bias, { ...tol, what: `bias case ${n}: trace.bias` });
  }
});

test('trace.qRotated and trace.kRotated are q and k rotated at their positions; absent without rope', () => {
  const dims = { B: 1, H: 4, Hkv: 2, Tq: 3, Tk: 7, d: 8, dv: 8 };
  const args = { ...make(30, dims), rope: { base: 1000 } };
  const { traced, ref } = checkBothPaths(args, dims, 'rope trace');
  assert.deepEqual(traced.trace.qRotated.shape, args.shape);
  assert.deepEqual(traced.trace.kRotated.shape, args.kvShape);
  assertClose(traced.trace.qRotated.data, ref.qRotated, { ...tol, what: 'qRotated' });
  assertClose(traced.trace.kRotated.data, ref.kRotated, { ...tol, what: 'kRotated' });
  const plain = engine.attention({ ...make(30, dims) });
  assert.equal(plain.trace.qRotated, undefined);
  assert.equal(plain.trace.kRotated, undefined);
  assert.equal(plain.trace.bias, undefined);
});

test('rank 3 and rank 2 take kvShape too', () => {
  const r = rng(40);
  const rank3 = engine.attention({
    q: r.floats(4 * 2 * 4),
    k: r.floats(2 * 5 * 4),
    v: r.floats(2 * 5 * 4),
    shape: [4, 2, 4],
    kvShape: [2, 5, 4],
  });
  assert.deepEqual(rank3.output.shape, [4, 2, 4]);
  assert.deepEqual(rank3.fullyMasked.shape, [4, 2]);
  const rank2 = engine.attention({
    q: r.floats(2 * 4),
    k: r.floats(6 * 4),
    v: r.floats(6 * 3),
    shape: [2, 4],
    kvShape: [6, 4],
    rope: {},
  });
  assert.deepEqual(rank2.output.shape, [2, 3]);
  assert.deepEqual(rank2.trace.kRotated.shape, [6, 4]);
});

test('GQA equals MHA with each kv head repeated for its query heads', () => {
  const dims = { B: 2, H: 6, Hkv: 2, Tq: 5, Tk: 8, d: 4, dv: 4 };
  const args = { ...make(50, dims), rope: {}, mask: { causal: true, window: 3 } };
  const repeat = (x, width) => {
    const out = new Float32Array(dims.B * dims.H * dims.Tk * width);
    const block = dims.Tk * width;
    for (let b = 0; b < dims.B; b++) {
      for (let h = 0; h < dims.H; h++) {
        const src = (b * dims.Hkv + Math.floor(h / 3)) * block;
        out.set(x.subarray(src, src + block), (b * dims.H + h) * block);
      }
    }
    return out;
  };
  const mha = { ...args, k: repeat(args.k, 4), v: repeat(args.v, 4), kvShape: [2, 6, 8, 4] };
  for (const trace of [true, false]) {
    const grouped = engine.attention({ ...args, trace });
    const repeated = engine.attention({ ...mha, trace });
    assertClose(grouped.output.data, repeated.output.data, {
      atol: 1e-6,
      rtol: 1e-6,
      what: `trace ${trace}`,
    });
  }
});

test('a decode step (Tq = 1) equals the last row of causal attention over the same keys', () => {
  const dims = { B: 1, H: 4, Hkv: 2, Tq: 33, Tk: 33, d: 8, dv: 8 };
  const full = { ...make(60, dims), rope: {}, bias: 'alibi', mask: 'causal' };
  const fullResult = engine.attention(full);
  const { H, Tq, d } = dims;
  const lastRows = new Float32Array(H * d);
  for (let h = 0; h < H; h++)
    lastRows.set(full.q.subarray((h * Tq + Tq - 1) * d, (h * Tq + Tq) * d), h * d);
  const expected = new Float32Array(H * d);
  for (let h = 0; h < H; h++) {
    expected.set(fullResult.output.data.subarray((h * Tq + Tq - 1) * d, (h * Tq + Tq) * d), h * d);
  }
  for (const trace of [true, false]) {
    const step = engine.attention({ ...full, q: lastRows, shape: [1, H, 1, d], trace });
    assertClose(step.output.data, expected, {
      atol: 1e-6,
      rtol: 1e-6,
      what: `decode step, trace ${trace}`,
    });
  }
});

test('a window of at least Tk equals no window', () => {
  const dims = { B: 1, H: 2, Hkv: 1, Tq: 10, Tk: 17, d: 4, dv: 4 };
  const base = make(70, dims);
  for (const mask of [{ causal: true }, {}]) {
    const none = engine.attention({ ...base, mask });
    for (const window of [17, 18, 1000]) {
      for (const trace of [true, false]) {
        const windowed = engine.attention({ ...base, mask: { ...mask, window }, trace });
        assert.deepEqual(
          windowed.output.data,
          engine.attention({ ...base, mask, trace }).output.data,
          `window ${window}`,
        );
      }
    }
    assert.ok(none.output.data.length > 0);
  }
});

test('rope: scores depend on the relative position only', () => {
  // The same q and k vector at every position: with rope, score(i, j) is a function of i − j.
  const T = 9;
  const d = 8;
  const r = rng(80);
  const [qRow, kRow] = [r.floats(d), r.floats(d)];
  const q = new Float32Array(T * d);
  const k = new Float32Array(T * d);
  for (let t = 0; t < T; t++) {
    q.set(qRow, t * d);
    k.set(kRow, t * d);
  }
  const result = engine.attention({ q, k, v: k, shape: [T, d], rope: { base: 10 } });
  const s = result.trace.scores.data;
  let varies = false;
  for (let i = 0; i + 1 < T; i++) {
    for (let j = 0; j + 1 < T; j++) {
      assert.ok(
        Math.abs(s[i * T + j] - s[(i + 1) * T + j + 1]) < 1e-5,
        `score(${i}, ${j}) vs (${i + 1}, ${j + 1})`,
      );
      if (Math.abs(s[i * T + j] - s[i * T + ((j + 1) % T)]) > 1e-3) varies = true;
    }
  }
  assert.ok(varies, 'rope changes the scores with the relative position');
});

test('selfAttention with kvHeads, rope, ALiBi and a window equals attention on its traced projections', () => {
  const [T, C, H, Hkv, dk] = [7, 8, 4, 2, 4];
  const r = rng(90);
  const x = r.floats(T * C);
  const wq = r.floats(C * H * dk);
  const wk = r.floats(C * Hkv * dk);
  const wv = r.floats(C * Hkv * dk);
  const options = {
    rope: { base: 50 },
    bias: 'alibi',
    mask: { causal: true, window: 3, sinks: 1 },
  };
  const sa = engine.selfAttention({
    x,
    shape: [T, C],
    wq,
    wk,
    wv,
    heads: H,
    kvHeads: Hkv,
    ...options,
  });
  assert.deepEqual(sa.trace.q.shape, [H, T, dk]);
  assert.deepEqual(sa.trace.k.shape, [Hkv, T, dk]);
  assert.deepEqual(sa.trace.kRotated.shape, [Hkv, T, dk]);
  assert.deepEqual(sa.trace.bias.shape, [H, T, T]);
  const dims = { B: 1, H, Hkv, Tq: T, Tk: T, d: dk, dv: dk };
  const ref = variantAttention(sa.trace.q.data, sa.trace.k.data, sa.trace.v.data, dims, {
    causal: true,
    window: 3,
    sinks: 1,
    ropeBase: 50,
    alibi: true,
  });
  assertClose(sa.trace.headOutputs.data, ref.output, { ...tol, what: 'head outputs' });
  const fast = engine.selfAttention({
    x,
    shape: [T, C],
    wq,
    wk,
    wv,
    heads: H,
    kvHeads: Hkv,
    ...options,
    trace: false,
  });
  assertClose(fast.output.data, sa.output.data, { ...tol, what: 'fast selfAttention' });
});

test('transformerBlock takes kvHeads, rope and a window', () => {
  const [T, C, H, Hkv, hidden] = [5, 8, 4, 1, 16];
  const r = rng(95);
  const args = {
    x: r.floats(T * C),
    shape: [T, C],
    attention: {
      wq: r.floats(C * C),
      wk: r.floats(C * 2),
      wv: r.floats(C * 2),
      wo: r.floats(C * C),
      heads: H,
      kvHeads: Hkv,
    },
    hidden,
    ff1: { weight: r.floats(C * hidden) },
    ff2: { weight: r.floats(hidden * C) },
    rope: {},
    mask: { causal: true, window: 2 },
  };
  const traced = engine.transformerBlock(args);
  const fast = engine.transformerBlock({ ...args, trace: false });
  assert.deepEqual(traced.attention.trace.k.shape, [Hkv, T, 2]);
  assert.ok(traced.attention.trace.qRotated);
  assertClose(fast.output.data, traced.output.data, { ...tol, what: 'block output' });
});
