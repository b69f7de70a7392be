// The transformer-block parts against the double-precision reference.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import {
  gelu,
  layerNormReference,
  matmul,
  relu,
  selfAttentionReference,
} from 'attnscope/reference';
import { assertClose, rng } from './support.mjs';

const tol = { atol: 3e-5, rtol: 3e-5 };
const add = (a, b) => a.map((v, i) => v + b[i]);

test('positionalEncoding matches sin/cos of t / base^(2i/C)', () => {
  for (const [T, C, base] of [
    [1, 2, undefined],
    [7, 6, undefined],
    [50, 16, 100],
  ]) {
    const pe = engine.positionalEncoding({ length: T, dim: C, base });
    assert.deepEqual(pe.shape, [T, C]);
    const b = base ?? 10000;
    for (let t = 0; t < T; t++) {
      for (let i = 0; i < C; i += 2) {
        const angle = t / b ** (i / C);
        assert.ok(Math.abs(pe.data[t * C + i] - Math.sin(angle)) < 2e-5, `PE[${t},${i}]`);
        if (i + 1 < C)
          assert.ok(Math.abs(pe.data[t * C + i + 1] - Math.cos(angle)) < 2e-5, `PE[${t},${i + 1}]`);
      }
    }
  }
});

test('linear: x·W + b at several widths', () => {
  for (const [rows, inDim, outDim] of [
    [1, 1, 1],
    [3, 5, 7],
    [4, 16, 9],
    [2, 33, 4],
  ]) {
    const r = rng(rows * 1000 + inDim * 10 + outDim);
    const x = r.floats(rows * inDim);
    const weight = r.floats(inDim * outDim);
    const bias = r.floats(outDim);
    const y = engine.linear({ x, shape: [rows, inDim], weight, bias, outDim });
    assert.deepEqual(y.shape, [rows, outDim]);
    assertClose(y.data, matmul(x, rows, inDim, weight, outDim, bias), { ...tol, what: 'linear' });
    const noBias = engine.linear({ x, shape: [rows, inDim], weight });
    assertClose(noBias.data, matmul(x, rows, inDim, weight, outDim), {
      ...tol,
      what: 'linear without bias',
    });
  }
});

test('linear writes into out when given one: same values, same array, x may alias it', () => {
  const r = rng(77);
  const [rows, inDim, outDim] = [3, 4, 5];
  const x = r.floats(rows * inDim);
  const weight = r.floats(inDim * outDim);
  const bias = r.floats(outDim);
  const fresh = engine.linear({ x, shape: [rows, inDim], weight, bias });
  const out = new Float32Array(rows * outDim).fill(NaN);
  const y = engine.linear({ x, shape: [rows, inDim], weight, bias, out });
  assert.equal(y.data, out, "data is the caller's array");
  assert.deepEqual(y.shape, [rows, outDim]);
  assert.deepEqual([...out], [...fresh.data]);
  // out may be the input when the widths match: x is read before out is written.
  const square = r.floats(inDim * inDim);
  const xCopy = x.slice();
  const expected = engine.linear({ x, shape: [rows, inDim], weight: square });
  assert.equal(
    engine.linear({ x: xCopy, shape: [rows, inDim], weight: square, out: xCopy }).data,
    xCopy,
  );
  assert.deepEqual([...xCopy], [...expected.data]);
});

test('a linear call that fails leaves out untouched', () => {
  const out = new Float32Array(6).fill(7);
  assert.throws(
    () => engine.linear({ x: [1, NaN, 0, 1], shape: [2, 2], weight: new Float32Array(6), out }),
    /non-finite/,
  );
  assert.deepEqual([...out], new Array(6).fill(7));
});

test('layerNorm over the last dimension, with and without gamma/beta', () => {
  const r = rng(7);
  const [B, T, C] = [2, 3, 10];
  const x = r.floats(B * T * C, -4, 4);
  const gamma = r.floats(C);
  const beta = r.floats(C);
  const y = engine.layerNorm({ x, shape: [B, T, C], gamma, beta, eps: 1e-5 });
  assert.deepEqual(y.shape, [B, T, C]);
  assertClose(y.data, layerNormReference(x, B * T, C, gamma, beta, 1e-5), {
    ...tol,
    what: 'layerNorm',
  });
  const plain = engine.layerNorm({ x, shape: [B, T, C] });
  assertClose(plain.data, layerNormReference(x, B * T, C, undefined, undefined, 1e-5), {
    ...tol,
    what: 'layerNorm default',
  });
});

test('feedForward with ReLU and exact GELU', () => {
  const r = rng(11);
  const [T, C, hidden, cOut] = [5, 6, 12, 4];
  const x = r.floats(T * C, -2, 2);
  const w1 = r.floats(C * hidden);
  const b1 = r.floats(hidden);
  const w2 = r.floats(hidden * cOut);
  const b2 = r.floats(cOut);
  for (const [activation, f] of [
    ['relu', relu],
    ['gelu', gelu],
  ]) {
    const y = engine.feedForward({ x, shape: [T, C], w1, b1, w2, b2, hidden, activation });
    assert.deepEqual(y.shape, [T, cOut]);
    const h = matmul(x, T, C, w1, hidden, b1).map(f);
    assertClose(y.data, matmul(h, T, hidden, w2, cOut, b2), { ...tol, what: activation });
  }
});

test('residualAdd adds element-wise', () => {
  const r = rng(13);
  const a = r.floats(2 * 3 * 5);
  const b = r.floats(2 * 3 * 5);
  const y = engine.residualAdd({ a, b, shape: [2, 3, 5] });
  assert.deepEqual(y.shape, [2, 3, 5]);
  assertClose(y.data, add(Float64Array.from(a), b), { atol: 1e-6, what: 'sum' });
});

for (const normFirst of [false, true]) {
  for (const activation of ['relu', 'gelu']) {
    test(`transformerBlock ${normFirst ? 'pre' : 'post'}-norm, ${activation}: every stage`, () => {
      const r = rng(normFirst ? 21 : 22);
      const [B, T, C, heads, hidden] = [2, 6, 8, 2, 16];
      const x = r.floats(B * T * C, -2, 2);
      const att = {
        wq: r.floats(C * C),
        wk: r.floats(C * C),
        wv: r.floats(C * C),
        wo: r.floats(C * C),
        bq: r.floats(C),
        bk: r.floats(C),
        bv: r.floats(C),
        bo: r.floats(C),
        heads,
      };
      const norm1 = { gamma: r.floats(C, 0.5, 1.5), beta: r.floats(C) };
      const norm2 = { gamma: r.floats(C, 0.5, 1.5), beta: r.floats(C) };
      const ff1 = { weight: r.floats(C * hidden), bias: r.floats(hidden) };
      const ff2 = { weight: r.floats(hidden * C), bias: r.floats(C) };
      const res = engine.transformerBlock({
        x,
        shape: [B, T, C],
        attention: att,
        norm1,
        norm2,
        ff1,
        ff2,
        hidden,
        activation,
        normFirst,
        mask: 'causal',
      });
      const f = activation === 'gelu' ? gelu : relu;
      const causal = () => (i, j) => (j > i ? -Infinity : 0);
      const attend = (input) =>
        selfAttentionReference({
          x: Float64Array.from(input),
          B,
          T,
          C,
          ...att,
          factor: 1 / Math.sqrt(C / heads),
          mask: causal,
        }).output;
      const ln = (v, n) => layerNormReference(v, B * T, C, n.gamma, n.beta, 1e-5);
      const ffn = (v) =>
        matmul(
          matmul(v, B * T, C, ff1.weight, hidden, ff1.bias).map(f),
          B * T,
          hidden,
          ff2.weight,
          C,
          ff2.bias,
        );
      let expected;
      if (normFirst) {
        const n1 = ln(x, norm1);
        const h = add(Float64Array.from(x), attend(n1));
        const n2 = ln(h, norm2);
        expected = { norm1: n1, attentionResidual: h, norm2: n2, ffResidual: add(h, ffn(n2)) };
        expected.output = expected.ffResidual;
      } else {
        const h = add(Float64Array.from(x), attend(x));
        const n1 = ln(h, norm1);
        const hh = add(n1, ffn(n1));
        expected = { attentionResidual: h, norm1: n1, ffResidual: hh, norm2: ln(hh, norm2) };
        expected.output = expected.norm2;
      }
      for (const key of ['output', 'attentionResidual', 'norm1', 'ffResidual', 'norm2']) {
        assert.deepEqual(res[key].shape, [B, T, C], key);
        assertClose(res[key].data, expected[key], { atol: 2e-4, rtol: 2e-4, what: key });
      }
      assert.deepEqual(res.ffHidden.shape, [B, T, hidden]);
      assert.deepEqual(res.attention.trace.weights.shape, [B, heads, T, T]);
      assert.deepEqual(res.attention.fullyMasked.shape, [B, heads, T]);
    });
  }
}
