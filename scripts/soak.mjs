// Soak test of the built package: many good and rejected calls in a row, then
// checks that the wasm heap is exactly where it started and results are still
// right. Usage: node scripts/soak.mjs [goodCalls=100000] [badCalls=10000]
import assert from 'node:assert/strict';

import { AttnScopeError, createAttnScope } from 'attnscope';

const good = Number(process.argv[2] ?? 100000);
const bad = Number(process.argv[3] ?? 10000);
const engine = await createAttnScope();

const I2 = [
  [1, 0],
  [0, 1],
];
const seed001 = {
  x: I2,
  wq: I2,
  wk: I2,
  wv: [
    [1, 2],
    [3, 4],
  ],
};
const expected = [1.660477, 2.660477, 2.339523, 3.339523];
const check = () =>
  engine
    .selfAttention(seed001)
    .output.data.forEach((v, i) => assert.ok(Math.abs(v - expected[i]) < 1e-6));

const [B, T, C] = [2, 16, 16];
let s = 1;
const floats = (n) =>
  Float32Array.from({ length: n }, () => ((s = (s * 16807) % 2147483647) / 2147483647) * 2 - 1);
const x = floats(B * T * C);
const att = {
  wq: floats(C * C),
  wk: floats(C * C),
  wv: floats(C * C),
  wo: floats(C * C),
  heads: 4,
};
const goodCalls = [
  () => engine.selfAttention({ x, shape: [B, T, C], ...att, mask: 'causal' }),
  () =>
    engine.selfAttention({ x, shape: [B, T, C], ...att, mask: { lengths: [5, 16] }, trace: false }),
  () => engine.attention({ q: x, k: x, v: x, shape: [B, T, C], trace: false }),
  () =>
    engine.transformerBlock({
      x,
      shape: [B, T, C],
      attention: att,
      ff1: { weight: floats(C * C) },
      ff2: { weight: floats(C * C) },
      hidden: C,
    }),
];
const badCalls = [
  () =>
    engine.selfAttention({
      x: I2,
      wq: [
        [1, 0, 0],
        [0, 1, 0],
      ],
      wk: I2,
      wv: I2,
      heads: 2,
    }),
  () => engine.selfAttention({ ...seed001, mask: { lengths: [1, 2, 3] } }),
  () => engine.selfAttention({ ...seed001, heads: 0 }),
];

for (let i = 0; i < 40; i++) goodCalls[i % goodCalls.length]();
const start = engine.memoryUsage();
const t0 = performance.now();
for (let i = 0; i < good; i++) goodCalls[i % goodCalls.length]();
const t1 = performance.now();
for (let i = 0; i < bad; i++) {
  assert.throws(badCalls[i % badCalls.length], AttnScopeError);
}
const t2 = performance.now();
const end = engine.memoryUsage();
check();
console.log(
  `soak: ${good} good calls in ${((t1 - t0) / 1000).toFixed(1)} s, ${bad} rejected in ${((t2 - t1) / 1000).toFixed(1)} s; ` +
    `heap in use ${start.heapInUse} → ${end.heapInUse} bytes, wasm memory ${start.heapSize} → ${end.heapSize} bytes`,
);
assert.equal(end.heapInUse, start.heapInUse, 'heap in use changed');
assert.equal(end.heapSize, start.heapSize, 'wasm memory grew');
console.log('soak: ok');
