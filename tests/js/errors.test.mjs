// Every invalid input gives an AttnScopeError naming the argument, and the
// engine keeps working: a good call right after each bad one succeeds, and
// thousands of rejected calls leave the wasm heap exactly where it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';

import { engine } from './engine.mjs';
import { I2, assertClose, seed001, headsNotDividingWidth } from './support.mjs';

const seed001Output = [1.660477, 2.660477, 2.339523, 3.339523];

function goodCallSucceeds() {
  const r = engine.selfAttention(seed001);
  assertClose(r.output.data, seed001Output, { atol: 1e-6, what: 'good call after a bad one' });
}

const f32 = (n, fill = 0.5) => new Float32Array(n).fill(fill);
const withNaN = (n, at) => Object.assign(f32(n), { [at]: NaN });

// [label, call, expected message pattern]
const kBadInputs = [
  [
    'x shorter than its shape',
    () => engine.selfAttention({ x: f32(5), shape: [2, 3], wq: f32(6), wk: f32(6), wv: f32(6) }),
    /selfAttention: x has 5 values but shape \[2, 3\] needs 6/,
  ],
  [
    'x of the wrong type',
    () => engine.selfAttention({ x: 'hello', shape: [2, 2], wq: f32(4), wk: f32(4), wv: f32(4) }),
    /x must be a Float32Array or an array of numbers, got string/,
  ],
  [
    'a string inside nested x',
    () =>
      engine.selfAttention({
        x: [
          [1, 'a'],
          [0, 1],
        ],
        wq: I2,
        wk: I2,
        wv: I2,
      }),
    /x\[0\]\[1\] must be a number, got string/,
  ],
  [
    'ragged nested x',
    () => engine.selfAttention({ x: [[1, 0], [0]], wq: I2, wk: I2, wv: I2 }),
    /x\[1\] is ragged: expected 2 entries, got 1/,
  ],
  ['missing wv', () => engine.selfAttention({ x: I2, wq: I2, wk: I2 }), /wv is required/],
  [
    'wq length not a multiple of C',
    () => engine.selfAttention({ x: f32(4), shape: [2, 2], wq: f32(5), wk: f32(4), wv: f32(4) }),
    /selfAttention: wq has 5 values, not a multiple of C=2; expected a row-major \(C, n\) matrix/,
  ],
  [
    'NaN in x',
    () =>
      engine.selfAttention({ x: withNaN(4, 2), shape: [2, 2], wq: f32(4), wk: f32(4), wv: f32(4) }),
    /self_attention: x has a non-finite value \(NaN\) at flat index 2 of shape \(2, 2\)/,
  ],
  [
    'Infinity in wk',
    () =>
      engine.selfAttention({
        x: I2,
        wq: I2,
        wk: [
          [1, Infinity],
          [0, 1],
        ],
        wv: I2,
      }),
    /self_attention: wk has a non-finite value \(\+inf\) at flat index 1/,
  ],
  [
    'NaN in attention q',
    () => engine.attention({ q: withNaN(4, 3), k: f32(4), v: f32(4), shape: [2, 2] }),
    /attention: q has a non-finite value \(NaN\) at flat index 3/,
  ],
  [
    '-Infinity in v',
    () =>
      engine.attention({
        q: f32(4),
        k: f32(4),
        v: [
          [1, 2],
          [-Infinity, 0],
        ],
        shape: [2, 2],
      }),
    /attention: v has a non-finite value \(-inf\)/,
  ],
  [
    'NaN in a linear weight',
    () => engine.linear({ x: f32(4), shape: [2, 2], weight: withNaN(4, 0) }),
    /linear: weight has a non-finite value \(NaN\)/,
  ],
  [
    'NaN in layerNorm x',
    () => engine.layerNorm({ x: withNaN(6, 5), shape: [2, 3] }),
    /layer_norm: x has a non-finite value \(NaN\)/,
  ],
  [
    'NaN in a block bias',
    () =>
      engine.transformerBlock({
        x: I2,
        attention: { wq: I2, wk: I2, wv: I2, wo: I2, heads: 1 },
        ff1: { weight: I2, bias: [NaN, 0] },
        ff2: { weight: I2 },
        hidden: 2,
      }),
    /transformer_block: .*non-finite value \(NaN\)/,
  ],
  [
    'zero in shape',
    () => engine.selfAttention({ x: f32(0), shape: [0, 2], wq: f32(4), wk: f32(4), wv: f32(4) }),
    /shape\[0\] must be a positive integer, got 0/,
  ],
  [
    'negative size in shape',
    () => engine.selfAttention({ x: f32(4), shape: [-2, -2], wq: f32(4), wk: f32(4), wv: f32(4) }),
    /shape\[0\] must be a positive integer, got -2/,
  ],
  [
    'fractional size in shape',
    () => engine.attention({ q: f32(4), k: f32(4), v: f32(4), shape: [1.5, 2] }),
    /shape\[0\] must be a positive integer, got 1.5/,
  ],
  [
    'rank-1 shape',
    () => engine.selfAttention({ x: f32(4), shape: [4], wq: f32(4), wk: f32(4), wv: f32(4) }),
    /shape must be \[B, T, C\] or \[T, C\], got rank 1/,
  ],
  [
    'heads = 0',
    () => engine.selfAttention({ ...seed001, heads: 0 }),
    /heads must be a positive integer, got 0/,
  ],
  [
    'heads as a string',
    () => engine.selfAttention({ ...seed001, heads: '2' }),
    /heads must be a positive integer, got string/,
  ],
  [
    'heads not dividing the width (core)',
    () => engine.selfAttention(headsNotDividingWidth),
    /self_attention: wq .*multiple of heads=2/,
  ],
  [
    'wq with the wrong number of rows (core)',
    () =>
      engine.selfAttention({
        x: I2,
        wq: [
          [1, 0],
          [0, 1],
          [1, 1],
        ],
        wk: I2,
        wv: I2,
      }),
    /self_attention: wq/,
  ],
  [
    'wo rows not matching H*d_v',
    () => engine.selfAttention({ ...seed001, wo: f32(3) }),
    /wo has 3 values, not a multiple of H\*d_v=2/,
  ],
  [
    'lengths of the wrong count (core)',
    () => engine.selfAttention({ ...seed001, mask: { lengths: [1, 2, 3] } }),
    /lengths/,
  ],
  [
    'negative length',
    () => engine.selfAttention({ ...seed001, mask: { lengths: [-1] } }),
    /mask.lengths\[0\] must be a non-negative integer, got -1/,
  ],
  [
    'misspelt mask field',
    () => engine.selfAttention({ ...seed001, mask: { casual: true } }),
    /mask has an unknown field 'casual' \(expected causal, lengths/,
  ],
  [
    'unknown mask name',
    () => engine.selfAttention({ ...seed001, mask: 'future' }),
    /mask must be 'none', 'causal' or a mask object, got future/,
  ],
  [
    'additive mask of a length fitting no shape',
    () => engine.selfAttention({ ...seed001, mask: { additive: f32(3) } }),
    /mask.additive has 3 values, which fits none of/,
  ],
  [
    '+Infinity in the additive mask',
    () =>
      engine.selfAttention({
        ...seed001,
        mask: {
          additive: [
            [0, Infinity],
            [0, 0],
          ],
        },
      }),
    /mask.additive has a non-finite value \(\+inf\) at flat index 1/,
  ],
  [
    'allowed mask with a 2',
    () =>
      engine.selfAttention({
        ...seed001,
        mask: {
          allowed: [
            [1, 2],
            [1, 1],
          ],
        },
      }),
    /mask.allowed must hold booleans or 0\/1, got 2/,
  ],
  [
    'scale as a string',
    () => engine.selfAttention({ ...seed001, scale: 'yes' }),
    /scale must be a boolean or a number/,
  ],
  [
    'scale NaN',
    () => engine.selfAttention({ ...seed001, scale: NaN }),
    /scale must be a finite number, got NaN/,
  ],
  [
    'trace as a number',
    () => engine.selfAttention({ ...seed001, trace: 1 }),
    /trace must be a boolean/,
  ],
  [
    'no arguments at all',
    () => engine.selfAttention(),
    /selfAttention: expects an object of named arguments/,
  ],
  [
    'huge T on the traced path',
    () => engine.selfAttention({ x: f32(50000 * 2), shape: [50000, 2], wq: I2, wk: I2, wv: I2 }),
    /T=50000 needs .* GiB .*pass trace: false/,
  ],
  [
    'huge T through attention()',
    () =>
      engine.attention({
        q: f32(40000 * 4),
        k: f32(40000 * 4),
        v: f32(40000 * 4),
        shape: [40000, 4],
      }),
    /more than WebAssembly's 4 GiB/,
  ],
  [
    'out of the wrong size',
    () => engine.attention({ q: f32(8), k: f32(8), v: f32(12), shape: [4, 2], out: f32(8) }),
    /attention: out has 8 elements, but the output \[4, 3\] has 12/,
  ],
  [
    'out not a Float32Array',
    () =>
      engine.attention({
        q: f32(8),
        k: f32(8),
        v: f32(8),
        shape: [4, 2],
        out: new Float64Array(8),
      }),
    /attention: out must be a Float32Array, got Float64Array/,
  ],
  [
    'k of a different length than q',
    () => engine.attention({ q: f32(8), k: f32(6), v: f32(8), shape: [4, 2] }),
    /attention: k has 6 values but shape \[4, 2\] needs 8/,
  ],
  [
    'positionalEncoding with dim 0',
    () => engine.positionalEncoding({ length: 4, dim: 0 }),
    /dim must be a positive integer, got 0/,
  ],
  [
    'positionalEncoding larger than wasm memory',
    () => engine.positionalEncoding({ length: 2 ** 20, dim: 2 ** 12 }),
    /more than WebAssembly's 4 GiB/,
  ],
  [
    'positionalEncoding just under 4 GiB, refused before allocating',
    () => engine.positionalEncoding({ length: 1048575, dim: 1024 }),
    /positionalEncoding: the call needs 4\.000 GiB of WebAssembly memory .*more than WebAssembly's 4 GiB/,
  ],
  [
    'linear with outDim not matching weight',
    () => engine.linear({ x: f32(4), shape: [2, 2], weight: f32(6), outDim: 2 }),
    /weight has shape \[2, 3\], expected outDim=2 columns/,
  ],
  [
    'linear out of the wrong size',
    () => engine.linear({ x: f32(4), shape: [2, 2], weight: f32(6), out: f32(4) }),
    /linear: out has 4 elements, but the output \[2, 3\] has 6/,
  ],
  [
    'linear out not a Float32Array',
    () => engine.linear({ x: f32(4), shape: [2, 2], weight: f32(6), out: [0, 0, 0, 0, 0, 0] }),
    /linear: out must be a Float32Array, got an array/,
  ],
  [
    'linear bias of the wrong length (core)',
    () => engine.linear({ x: f32(4), shape: [2, 2], weight: f32(6), bias: f32(2) }),
    /bias/,
  ],
  [
    'layerNorm gamma of the wrong length (core)',
    () => engine.layerNorm({ x: f32(6), shape: [2, 3], gamma: f32(2) }),
    /gamma/,
  ],
  [
    'layerNorm eps NaN',
    () => engine.layerNorm({ x: f32(6), shape: [2, 3], eps: NaN }),
    /eps must be a finite number/,
  ],
  [
    'feedForward w1 not (C, hidden)',
    () => engine.feedForward({ x: f32(6), shape: [2, 3], w1: f32(12), w2: f32(12), hidden: 3 }),
    /w1 has shape \[3, 4\], expected hidden=3 columns/,
  ],
  [
    'feedForward unknown activation',
    () =>
      engine.feedForward({
        x: f32(6),
        shape: [2, 3],
        w1: f32(9),
        w2: f32(9),
        hidden: 3,
        activation: 'tanh',
      }),
    /activation must be 'relu' or 'gelu', got tanh/,
  ],
  [
    'residualAdd shapes differ',
    () => engine.residualAdd({ a: f32(6), b: f32(4), shape: [2, 3] }),
    /residualAdd: b has 4 values but shape \[2, 3\] needs 6/,
  ],
  [
    'transformerBlock without wo',
    () =>
      engine.transformerBlock({
        x: I2,
        attention: { wq: I2, wk: I2, wv: I2, heads: 1 },
        ff1: { weight: I2 },
        ff2: { weight: I2 },
        hidden: 2,
      }),
    /attention.wo is required/,
  ],
  [
    'transformerBlock hidden missing',
    () =>
      engine.transformerBlock({
        x: I2,
        attention: { wq: I2, wk: I2, wv: I2, wo: I2, heads: 1 },
        ff1: { weight: I2 },
        ff2: { weight: I2 },
      }),
    /hidden must be a positive integer/,
  ],
];

for (const [label, call, pattern] of kBadInputs) {
  test(`bad input: ${label}`, () => {
    assert.throws(call, (e) => {
      assert.ok(
        e instanceof AttnScopeError,
        `expected AttnScopeError, got ${e?.constructor?.name}: ${e?.message}`,
      );
      assert.ok(e instanceof Error);
      assert.equal(e.name, 'AttnScopeError');
      assert.match(e.message, pattern);
      return true;
    });
    goodCallSucceeds();
  });
}

test('10 000 rejected calls (most reaching the C++ core) leave the wasm heap where it was', () => {
  const coreRejected = [
    () => engine.selfAttention(headsNotDividingWidth),
    () => engine.selfAttention({ ...seed001, mask: { lengths: [1, 2, 3] } }),
    () =>
      engine.attention({
        q: [
          [1, 2],
          [3, 4],
        ],
        k: [
          [1, 2],
          [3, 4],
        ],
        v: [
          [1, 2, 3],
          [4, 5, 6],
        ],
        mask: {
          additive: [
            [0, 0, 0],
            [0, 0, 0],
            [0, 0, 0],
          ],
        },
      }),
    () => engine.linear({ x: f32(4), shape: [2, 2], weight: f32(6), bias: f32(2) }),
  ];
  const validationRejected = [() => engine.selfAttention({ ...seed001, heads: 0 })];
  const run = (n) => {
    let core = 0;
    for (let i = 0; i < n; i++) {
      const all = [...coreRejected, ...validationRejected];
      try {
        all[i % all.length]();
        assert.fail('a bad call succeeded');
      } catch (e) {
        if (!(e instanceof AttnScopeError)) throw e;
        if (/^self_attention: /.test(e.message)) core++; // the core's own prefix
      }
    }
    return core;
  };
  run(50); // warm-up: first-use allocations of the runtime
  const before = engine.memoryUsage();
  const core = run(10000);
  const after = engine.memoryUsage();
  assert.ok(core >= 4000, `only ${core} of 10000 calls reached the core`);
  assert.equal(after.heapInUse, before.heapInUse, 'bytes allocated by malloc');
  assert.equal(after.heapSize, before.heapSize, 'wasm memory size');
  goodCallSucceeds();
});
