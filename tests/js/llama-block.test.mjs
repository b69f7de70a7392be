// rmsNorm, swiglu and llamaBlock against a double-precision reference, with
// grouped kv heads, rope and a window in the block's attention.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';

import { engine } from './engine.mjs';
import { assertClose, rng } from './support.mjs';
import { matmul, variantAttention } from 'attnscope/reference';

const tol = { atol: 3e-5, rtol: 3e-5 };

function rmsNormReference(x, rows, C, gamma, eps) {
  const out = new Float64Array(rows * C);
  for (let r = 0; r < rows; r++) {
    let sum = 0;
    for (let c = 0; c < C; c++) sum += x[r * C + c] ** 2;
    const inv = 1 / Math.sqrt(sum / C + eps);
    for (let c = 0; c < C; c++) out[r * C + c] = x[r * C + c] * inv * (gamma ? gamma[c] : 1);
  }
  return out;
}

function swigluReference(x, rows, C, hidden, out, { gate, up, down }) {
  const g = matmul(x, rows, C, gate, hidden);
  const u = matmul(x, rows, C, up, hidden);
  const h = g.map((z, i) => (z / (1 + Math.exp(-z))) * u[i]);
  return matmul(h, rows, hidden, down, out);
}

test('rmsNorm equals the reference, with and without gamma; bad eps is named', () => {
  const r = rng(1);
  const [rows, C] = [5, 12];
  const x = r.floats(rows * C, -3, 3);
  const gamma = r.floats(C);
  assertClose(
    engine.rmsNorm({ x, shape: [rows, C] }).data,
    rmsNormReference(x, rows, C, null, 1e-6),
    tol,
  );
  const y = engine.rmsNorm({ x, shape: [1, rows, C], gamma, eps: 1e-3 });
  assert.deepEqual(y.shape, [1, rows, C]);
  assertClose(y.data, rmsNormReference(x, rows, C, gamma, 1e-3), tol);
  for (const eps of [0, -1, NaN, 'a']) {
    assert.throws(
      () => engine.rmsNorm({ x, shape: [rows, C], eps }),
      (e) => e instanceof AttnScopeError && /rmsNorm: eps must be/.test(e.message),
    );
  }
  assert.throws(
    () => engine.rmsNorm({ x, shape: [rows, C], gamma: r.floats(5) }),
    (e) => e instanceof AttnScopeError && /gamma/.test(e.message),
  );
});

test('swiglu equals the reference; missing or misshapen weights are named', () => {
  const r = rng(2);
  const [rows, C, hidden, out] = [4, 6, 10, 5];
  const x = r.floats(rows * C);
  const w = { gate: r.floats(C * hidden), up: r.floats(C * hidden), down: r.floats(hidden * out) };
  const y = engine.swiglu({
    x,
    shape: [rows, C],
    gate: { weight: w.gate },
    up: { weight: w.up },
    down: { weight: w.down },
  });
  assert.deepEqual(y.shape, [rows, out]);
  assertClose(y.data, swigluReference(x, rows, C, hidden, out, w), tol);
  assert.throws(
    () => engine.swiglu({ x, shape: [rows, C], gate: { weight: w.gate }, up: { weight: w.up } }),
    /swiglu: down is required/,
  );
  assert.throws(
    () =>
      engine.swiglu({
        x,
        shape: [rows, C],
        gate: { weight: w.gate },
        up: { weight: r.floats(C * 3) },
        down: { weight: w.down },
      }),
    (e) => e instanceof AttnScopeError && /up\.weight/.test(e.message),
  );
});

test('llamaBlock with GQA, rope and a causal window equals the reference, traced and fast', () => {
  const r = rng(3);
  const [T, C, H, Hkv, hidden] = [6, 8, 4, 2, 12];
  const dk = C / H;
  const x = r.floats(T * C);
  const w = {
    wq: r.floats(C * C),
    wk: r.floats(C * Hkv * dk),
    wv: r.floats(C * Hkv * dk),
    wo: r.floats(C * C),
    attentionNorm: r.floats(C, 0.5, 1.5),
    ffnNorm: r.floats(C, 0.5, 1.5),
    gate: r.floats(C * hidden),
    up: r.floats(C * hidden),
    down: r.floats(hidden * C),
  };
  const args = {
    x,
    shape: [T, C],
    attention: { wq: w.wq, wk: w.wk, wv: w.wv, wo: w.wo, heads: H, kvHeads: Hkv },
    attentionNorm: w.attentionNorm,
    ffnNorm: w.ffnNorm,
    gate: { weight: w.gate },
    up: { weight: w.up },
    down: { weight: w.down },
    rope: {},
    mask: { causal: true, window: 3 },
  };
  // Reference: h = x + Attn(RMSNorm(x)); out = h + SwiGLU(RMSNorm(h)).
  const n1 = rmsNormReference(x, T, C, w.attentionNorm, 1e-6);
  const heads = (m, width, count) => {
    const out = new Float64Array(count * T * width);
    for (let h = 0; h < count; h++)
      for (let t = 0; t < T; t++)
        for (let c = 0; c < width; c++)
          out[(h * T + t) * width + c] = m[t * count * width + h * width + c];
    return out;
  };
  const q = heads(matmul(n1, T, C, w.wq, C), dk, H);
  const k = heads(matmul(n1, T, C, w.wk, Hkv * dk), dk, Hkv);
  const v = heads(matmul(n1, T, C, w.wv, Hkv * dk), dk, Hkv);
  const att = variantAttention(
    q,
    k,
    v,
    { B: 1, H, Hkv, Tq: T, Tk: T, d: dk, dv: dk },
    { causal: true, window: 3, ropeBase: 10000 },
  );
  const concat = new Float64Array(T * C);
  for (let h = 0; h < H; h++)
    for (let t = 0; t < T; t++)
      for (let c = 0; c < dk; c++) concat[t * C + h * dk + c] = att.output[(h * T + t) * dk + c];
  const h1 = matmul(concat, T, C, w.wo, C).map((y, i) => y + x[i]);
  const n2 = rmsNormReference(h1, T, C, w.ffnNorm, 1e-6);
  const expected = swigluReference(n2, T, C, hidden, C, w).map((y, i) => y + h1[i]);

  const traced = engine.llamaBlock(args);
  assertClose(traced.attentionNorm.data, n1, { ...tol, what: 'attentionNorm' });
  assertClose(traced.attentionResidual.data, h1, { ...tol, what: 'attentionResidual' });
  assertClose(traced.output.data, expected, { ...tol, what: 'output' });
  assert.deepEqual(traced.attention.trace.kRotated.shape, [Hkv, T, dk]);
  assert.deepEqual(traced.attention.fullyMasked.shape, [H, T]);
  const fast = engine.llamaBlock({ ...args, trace: false });
  assert.equal(fast.attention.trace, undefined);
  assertClose(fast.output.data, expected, { ...tol, what: 'fast output' });
});

test('llamaBlock refuses a block without wo or with kvHeads that do not divide heads, naming them', () => {
  const r = rng(4);
  const base = {
    x: r.floats(16),
    shape: [2, 8],
    attention: { wq: r.floats(64), wk: r.floats(64), wv: r.floats(64), wo: r.floats(64), heads: 2 },
    gate: { weight: r.floats(32) },
    up: { weight: r.floats(32) },
    down: { weight: r.floats(32) },
  };
  const before = engine.memoryUsage();
  assert.throws(
    () => engine.llamaBlock({ ...base, attention: { ...base.attention, wo: undefined } }),
    /llamaBlock: attention.wo is required/,
  );
  assert.throws(
    () => engine.llamaBlock({ ...base, attention: { ...base.attention, kvHeads: 3 } }),
    /llamaBlock: kvHeads is 3/,
  );
  assert.throws(
    () => engine.llamaBlock({ ...base, gate: undefined }),
    /llamaBlock: gate is required/,
  );
  assert.deepEqual(engine.memoryUsage(), before);
  assert.ok(engine.llamaBlock(base).output.data.every(Number.isFinite));
});
