// Bad options of the attention variants: each is an AttnScopeError naming the
// argument, the heap is left as it was, and the engine keeps working. The
// memory guard counts the variants' extra tensors.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';

import { engine } from './engine.mjs';
import { rng } from './support.mjs';

const r = rng(1);
// q (1, 4, 3, 8), k and v (1, 2, 5, 8): a valid grouped call with a KV cache.
const base = {
  q: r.floats(96),
  k: r.floats(80),
  v: r.floats(80),
  shape: [1, 4, 3, 8],
  kvShape: [1, 2, 5, 8],
};
const good = () =>
  engine.attention({
    ...base,
    rope: {},
    bias: 'alibi',
    mask: { causal: true, window: 2, sinks: 1 },
  });
const reference = good().output.data;

const x = r.floats(3 * 8);
const sa = {
  x,
  shape: [3, 8],
  wq: r.floats(64),
  wk: r.floats(32),
  wv: r.floats(32),
  heads: 4,
  kvHeads: 2,
};

// [label, call, message pattern naming the argument]
const kBadInputs = [
  [
    'H not a multiple of Hkv',
    () => engine.attention({ ...base, kvShape: [1, 3, 5, 8], k: r.floats(120), v: r.floats(120) }),
    /attention: kvShape has 3 kv heads, which does not divide q's H=4/,
  ],
  [
    'batch mismatch',
    () => engine.attention({ ...base, kvShape: [2, 2, 5, 8], k: r.floats(160), v: r.floats(160) }),
    /attention: kvShape .* has batch 2, but q has batch 1/,
  ],
  [
    'Tq > Tk',
    () => engine.attention({ ...base, kvShape: [1, 2, 2, 8], k: r.floats(32), v: r.floats(32) }),
    /attention: shape has Tq=3 queries, more than kvShape's Tk=2 keys/,
  ],
  [
    'd_k mismatch',
    () => engine.attention({ ...base, kvShape: [1, 2, 5, 4], k: r.floats(40) }),
    /attention: kvShape has d_k=4, but q has d_k=8/,
  ],
  [
    'kvShape of another rank',
    () => engine.attention({ ...base, kvShape: [2, 5, 8] }),
    /attention: kvShape must have the rank of shape \(4, \[1, 4, 3, 8\]\), got rank 3/,
  ],
  [
    'kvShape not an array',
    () => engine.attention({ ...base, kvShape: '1,2,5,8' }),
    /attention: kvShape must have the rank of shape/,
  ],
  [
    'kvShape with a zero',
    () => engine.attention({ ...base, kvShape: [1, 2, 0, 8] }),
    /attention: kvShape\[2\] must be a positive integer, got 0/,
  ],
  [
    'kvShape above 2^30',
    () => engine.attention({ ...base, kvShape: [1, 2, 2 ** 31, 8] }),
    /attention: kvShape\[2\] must be a positive integer, got 2147483648 \(at most 1073741824\)/,
  ],
  [
    'k not matching kvShape',
    () => engine.attention({ ...base, k: r.floats(96) }),
    /attention: k has 96 values but shape \[1, 2, 5, 8\] needs 80/,
  ],
  [
    'v not matching kvShape',
    () => engine.attention({ ...base, v: r.floats(81) }),
    /attention: v has 81 values, not a multiple of B\*Hkv\*Tk=10/,
  ],
  [
    'odd d with rope',
    () =>
      engine.attention({ q: r.floats(6), k: r.floats(6), v: r.floats(6), shape: [2, 3], rope: {} }),
    /attention: rope needs an even d_k \(it rotates pairs\), got d_k=3/,
  ],
  [
    'rope base 0',
    () => engine.attention({ ...base, rope: { base: 0 } }),
    /attention: rope.base must be a finite number > 0, got 0/,
  ],
  [
    'rope base negative',
    () => engine.attention({ ...base, rope: { base: -2 } }),
    /attention: rope.base must be a finite number > 0, got -2/,
  ],
  [
    'rope base Infinity',
    () => engine.attention({ ...base, rope: { base: Infinity } }),
    /attention: rope.base must be a finite number, got Infinity/,
  ],
  [
    'rope base NaN',
    () => engine.attention({ ...base, rope: { base: NaN } }),
    /attention: rope.base must be a finite number, got NaN/,
  ],
  [
    'rope base a string',
    () => engine.attention({ ...base, rope: { base: '10000' } }),
    /attention: rope.base must be a finite number, got string/,
  ],
  [
    'rope not an object',
    () => engine.attention({ ...base, rope: true }),
    /attention: rope must be an object \{ base \}, got boolean/,
  ],
  [
    'rope with an unknown field',
    () => engine.attention({ ...base, rope: { theta: 10 } }),
    /attention: rope has an unknown field 'theta'/,
  ],
  [
    'window 0',
    () => engine.attention({ ...base, mask: { window: 0 } }),
    /attention: mask.window must be a positive integer, got 0/,
  ],
  [
    'window negative',
    () => engine.attention({ ...base, mask: { window: -3 } }),
    /attention: mask.window must be a positive integer, got -3/,
  ],
  [
    'window not an integer',
    () => engine.attention({ ...base, mask: { window: 2.5 } }),
    /attention: mask.window must be a positive integer, got 2.5/,
  ],
  [
    'window above 2^30',
    () => engine.attention({ ...base, mask: { window: 2 ** 30 + 1 } }),
    /attention: mask.window must be a positive integer, got 1073741825 \(at most 1073741824\)/,
  ],
  [
    'window NaN',
    () => engine.attention({ ...base, mask: { window: NaN } }),
    /attention: mask.window must be a positive integer, got NaN/,
  ],
  [
    'sinks above Tk',
    () => engine.attention({ ...base, mask: { window: 2, sinks: 6 } }),
    /attention: mask.sinks is 6, more than Tk=5 keys/,
  ],
  [
    'sinks negative',
    () => engine.attention({ ...base, mask: { window: 2, sinks: -1 } }),
    /attention: mask.sinks must be a non-negative integer, got -1/,
  ],
  [
    'sinks a string',
    () => engine.attention({ ...base, mask: { sinks: '1' } }),
    /attention: mask.sinks must be a non-negative integer, got string/,
  ],
  [
    'misspelt mask field',
    () => engine.attention({ ...base, mask: { windw: 2 } }),
    /attention: mask has an unknown field 'windw'/,
  ],
  [
    'unknown bias',
    () => engine.attention({ ...base, bias: 'alibi2' }),
    /attention: bias must be 'alibi' or an object \{ alibi, values, shape \}, got alibi2/,
  ],
  [
    'empty bias object',
    () => engine.attention({ ...base, bias: {} }),
    /attention: bias needs alibi: true or values/,
  ],
  [
    'bias.alibi not a boolean',
    () => engine.attention({ ...base, bias: { alibi: 1 } }),
    /attention: bias.alibi must be a boolean, got number/,
  ],
  [
    'bias values of no shape',
    () => engine.attention({ ...base, bias: { values: r.floats(7) } }),
    /attention: bias.values has 7 values, which fits none of \[4, 3, 5\], \[1, 4, 3, 5\]/,
  ],
  [
    'bias values of the wrong heads',
    () => engine.attention({ ...base, bias: { values: r.floats(30), shape: [2, 3, 5] } }),
    /attention: bias.values has shape \(2, 3, 5\), expected \(H, Tq, Tk\) = \(4, 3, 5\)/,
  ],
  [
    'NaN in bias values',
    () => engine.attention({ ...base, bias: { values: Object.assign(r.floats(60), { 7: NaN }) } }),
    /attention: bias.values has a non-finite value \(NaN\) at flat index 7/,
  ],
  [
    'a mask of the square shape when Tq < Tk',
    () => engine.attention({ ...base, mask: { additive: r.floats(9) } }),
    /attention: mask.additive has 9 values, which fits none of \[3, 5\]/,
  ],
  [
    'kvHeads not dividing heads',
    () => engine.selfAttention({ ...sa, kvHeads: 3 }),
    /selfAttention: kvHeads is 3, which does not divide heads=4/,
  ],
  [
    'kvHeads 0',
    () => engine.selfAttention({ ...sa, kvHeads: 0 }),
    /selfAttention: kvHeads must be a positive integer, got 0/,
  ],
  [
    'wk too wide for kvHeads',
    () => engine.selfAttention({ ...sa, wk: r.floats(64) }),
    /self_attention: wk has shape \(8, 8\), expected \(8, 4\) to match wq and kv_heads=2/,
  ],
  [
    'wo rows not H*d_v',
    () => engine.selfAttention({ ...sa, wo: r.floats(20) }),
    /selfAttention: wo has 20 values, not a multiple of H\*d_v=8/,
  ],
  [
    'odd d with rope in selfAttention',
    () =>
      engine.selfAttention({
        x,
        shape: [3, 8],
        wq: r.floats(24),
        wk: r.floats(24),
        wv: r.floats(24),
        rope: {},
      }),
    /selfAttention: rope needs an even d_k \(it rotates pairs\), got d_k=3/,
  ],
  [
    'window 0 in transformerBlock',
    () =>
      engine.transformerBlock({
        x,
        shape: [3, 8],
        attention: {
          wq: r.floats(64),
          wk: r.floats(64),
          wv: r.floats(64),
          wo: r.floats(64),
          heads: 2,
        },
        hidden: 4,
        ff1: { weight: r.floats(32) },
        ff2: { weight: r.floats(32) },
        mask: { window: 0 },
      }),
    /transformerBlock: mask.window must be a positive integer, got 0/,
  ],
];

test('every bad variant option is an AttnScopeError naming the argument; the engine stays usable', () => {
  for (const [label, call, pattern] of kBadInputs) {
    const before = engine.memoryUsage();
    assert.throws(call, (e) => e instanceof AttnScopeError && pattern.test(e.message), label);
    assert.deepEqual(engine.memoryUsage(), before, `${label}: memory changed`);
    assert.deepEqual(good().output.data, reference, `${label}: a good call after it`);
  }
});

test('thousands of rejected variant calls leave the heap where it was', () => {
  const run = () => {
    for (let i = 0; i < 2000; i++) {
      try {
        kBadInputs[i % kBadInputs.length][1]();
      } catch (e) {
        if (!(e instanceof AttnScopeError)) throw e;
      }
    }
  };
  run();
  const before = engine.memoryUsage();
  run();
  assert.deepEqual(engine.memoryUsage(), before);
});

test('options are read as own properties: a polluted prototype changes nothing', () => {
  const names = ['window', 'sinks', 'rope', 'bias', 'kvShape', 'base', 'kvHeads'];
  const polluted = {
    window: 0,
    sinks: 99,
    rope: { base: -1 },
    bias: 'nonsense',
    kvShape: [9, 9, 9, 9],
    base: -1,
    kvHeads: 3,
  };
  try {
    for (const n of names) Object.prototype[n] = polluted[n];
    const plain = engine.attention({
      q: base.q,
      k: r.floats(96),
      v: r.floats(96),
      shape: base.shape,
      mask: { causal: true },
    });
    assert.equal(plain.trace.qRotated, undefined);
    const rope = Object.create(null);
    const mask = Object.create(null);
    mask.causal = true;
    mask.window = 2;
    mask.sinks = 1;
    const args = Object.assign(Object.create(null), base, { rope, bias: 'alibi', mask });
    assert.deepEqual(engine.attention(args).output.data, reference);
    assert.ok(engine.selfAttention({ ...sa, kvHeads: 2 }).output.data.every(Number.isFinite));
  } finally {
    for (const n of names) delete Object.prototype[n];
  }
});

test('the memory guard counts the bias and the rotated q and k', () => {
  // T = 40000: every trace is refused before anything is allocated; the
  // amounts the refusals name show what was counted.
  const T = 40000;
  const d = 2;
  const args = {
    q: new Float32Array(T * d),
    k: new Float32Array(T * d),
    v: new Float32Array(T * d),
    shape: [T, d],
  };
  const needed = (extra) => {
    try {
      engine.attention({ ...args, ...extra });
    } catch (e) {
      assert.ok(e instanceof AttnScopeError, String(e));
      return Number(/needs ([\d.]+) GiB/.exec(e.message)[1]);
    }
    assert.fail('the call was not refused');
  };
  const before = engine.memoryUsage();
  const plain = needed({});
  const square = (T * T * 4) / 2 ** 30;
  assert.ok(
    Math.abs(needed({ bias: 'alibi' }) - plain - square) < 0.002,
    'the bias is one more T×T tensor',
  );
  assert.ok(needed({ rope: {} }) > plain, 'rope counts the rotated q and k');
  assert.deepEqual(engine.memoryUsage(), before);
});

test('the fast path with ALiBi and a window is not refused for a T×T it never holds', () => {
  // B·H·T·T floats would be 4 GiB: only a trace holds them.
  const [H, T, d] = [4, 16384, 8];
  const q = rng(5).floats(H * T * d);
  const args = {
    q,
    k: q,
    v: q,
    shape: [H, T, d],
    bias: 'alibi',
    mask: { causal: true, window: 16 },
  };
  const r = engine.attention({ ...args, trace: false });
  assert.ok(r.output.data.every(Number.isFinite));
  assert.throws(() => engine.attention(args), /attention: a trace with B=1, H=4, T=16384 needs/);
});
