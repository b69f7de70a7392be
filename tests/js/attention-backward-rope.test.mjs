// engine.attentionBackward with rope: the gradient flows back through the
// rotation (dq = R(−θ)·dq_rotated, dk likewise). Both paths against the
// double reference (attnscope/reference) at sizes around the SIMD width and
// the flash tiles, with causal, padding and fully masked queries; the
// reference against central differences of the double forward with rope
// (variantAttention); a key/value cache (queries at Tk − Tq + i) and grouped
// heads against those differences directly; bad rope input by name.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import { attentionBackwardReference, mulberry32, variantAttention } from 'attnscope/reference';
import { engine } from './engine.mjs';
import { assertClose } from './support.mjs';

const randoms = (rng, n) => Float32Array.from({ length: n }, () => 2 * rng() - 1);
// A small base turns every pair by whole radians over these lengths.
const ropeBase = 100;

/** Σ dOutput ∘ output of the double forward with rope, as a function of x.q, x.k, x.v. */
function lossOf(x, dOutput, dims, options) {
  return () => {
    const { output } = variantAttention(x.q, x.k, x.v, dims, { ...options, ropeBase });
    let s = 0;
    for (let i = 0; i < output.length; i++) s += output[i] * dOutput[i];
    return s;
  };
}

/** Central difference of f at x[i] (float64 copies, so the step is exact). */
function centralDifference(f, x, i, h = 1e-6) {
  const saved = x[i];
  x[i] = saved + h;
  const up = f();
  x[i] = saved - h;
  const down = f();
  x[i] = saved;
  return (up - down) / (2 * h);
}

const masks = {
  none: () => ['none', {}],
  causal: () => ['causal', { causal: true }],
  // The second sequence sees no key at all: its queries are fully masked.
  padding: (T) => {
    const m = { causal: true, lengths: [Math.ceil(T / 2), 0] };
    return [m, m];
  },
};

for (const T of [1, 4, 7, 9, 33, 65]) {
  for (const d of [2, 4, 8, 10]) {
    for (const [maskName, maskOf] of Object.entries(masks)) {
      test(`attentionBackward with rope, T=${T}, d=${d}, mask ${maskName}: both paths match the double reference`, () => {
        const B = 2,
          H = 2,
          rng = mulberry32(T * 1000 + d * 10 + maskName.length);
        const [mask, spec] = maskOf(T);
        const q = randoms(rng, B * H * T * d),
          k = randoms(rng, B * H * T * d);
        const v = randoms(rng, B * H * T * d),
          dOutput = randoms(rng, B * H * T * d);
        const factor = 1 / Math.sqrt(d);
        const shape = { B, H, T, dk: d, dv: d };
        const want = attentionBackwardReference(q, k, v, dOutput, shape, factor, spec, {
          ropeBase,
        });
        for (const trace of [true, false]) {
          const got = engine.attentionBackward({
            q,
            k,
            v,
            dOutput,
            shape: [B, H, T, d],
            mask,
            rope: { base: ropeBase },
            trace,
          });
          for (const name of ['dq', 'dk', 'dv']) {
            assertClose(got[name].data, want[name], {
              atol: 2e-5,
              rtol: 1e-4,
              what: `${name} (trace ${trace})`,
            });
          }
        }
        if (T > 9) return; // the differences below are quadratic in T per probe
        // The reference against central differences of the double forward.
        const x = { q: Float64Array.from(q), k: Float64Array.from(k), v: Float64Array.from(v) };
        const dims = { B, H, Hkv: H, Tq: T, Tk: T, d, dv: d };
        const loss = lossOf(x, dOutput, dims, { factor, ...spec });
        for (const [name, grad] of [
          ['q', want.dq],
          ['k', want.dk],
        ]) {
          for (let i = 0; i < grad.length; i += 3) {
            const numeric = centralDifference(loss, x[name], i);
            assert.ok(
              Math.abs(numeric - grad[i]) < 1e-7,
              `d${name}[${i}]: ${grad[i]} vs ${numeric}`,
            );
          }
        }
      });
    }
  }
}

test('attentionBackward with rope, a key/value cache and grouped heads matches central differences', () => {
  const B = 2,
    H = 4,
    Hkv = 2,
    Tq = 5,
    Tk = 70,
    d = 8;
  const rng = mulberry32(77);
  const q = randoms(rng, B * H * Tq * d),
    k = randoms(rng, B * Hkv * Tk * d);
  const v = randoms(rng, B * Hkv * Tk * d),
    dOutput = randoms(rng, B * H * Tq * d);
  const mask = { causal: true, window: 40, lengths: [Tk, 60] };
  const x = { q: Float64Array.from(q), k: Float64Array.from(k), v: Float64Array.from(v) };
  const dims = { B, H, Hkv, Tq, Tk, d, dv: d };
  const loss = lossOf(x, dOutput, dims, mask);
  for (const trace of [true, false]) {
    const got = engine.attentionBackward({
      q,
      k,
      v,
      dOutput,
      shape: [B, H, Tq, d],
      kvShape: [B, Hkv, Tk, d],
      mask,
      rope: { base: ropeBase },
      trace,
    });
    for (const [name, grad] of [
      ['q', got.dq.data],
      ['k', got.dk.data],
      ['v', got.dv.data],
    ]) {
      for (let i = 0; i < grad.length; i += name === 'q' ? 5 : 37) {
        const numeric = centralDifference(loss, x[name], i);
        assert.ok(
          Math.abs(numeric - grad[i]) < 2e-5 * (1 + Math.abs(numeric)),
          `d${name}[${i}] (trace ${trace}): ${grad[i]} vs ${numeric}`,
        );
      }
    }
  }
});

test('attentionBackward rejects bad rope input by name and leaves memory as it was', () => {
  const before = engine.memoryUsage().heapInUse;
  const throwsNamed = (f, pattern) =>
    assert.throws(f, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  const odd = new Float32Array(12),
    dOutput = new Float32Array(12);
  throwsNamed(
    () => engine.attentionBackward({ q: odd, k: odd, v: odd, shape: [4, 3], dOutput, rope: {} }),
    /^attentionBackward: rope needs an even d_k \(it rotates pairs\), got d_k=3/,
  );
  const even = new Float32Array(8);
  const withRope = (rope) => () =>
    engine.attentionBackward({ q: even, k: even, v: even, shape: [4, 2], dOutput: even, rope });
  throwsNamed(
    withRope({ base: -1 }),
    /^attentionBackward: rope.base must be a finite number > 0, got -1/,
  );
  throwsNamed(withRope({ bas: 10 }), /^attentionBackward: rope has an unknown field 'bas'/);
  assert.equal(engine.memoryUsage().heapInUse, before);
});
