// Measures the machine's WebAssembly SIMD arithmetic peak (single thread):
// a tiny module, assembled byte by byte below, runs `accumulators` independent
// chains acc = acc·m + c on f32x4 vectors. Each step is one f32x4.mul and one
// f32x4.add (8 flops); wasm SIMD has no fused multiply-add, so mul+add is the
// best any kernel here can issue. The chains depend on their accumulator, so
// the engine cannot hoist the multiply out of the loop, and with enough chains
// the loop is throughput-bound instead of latency-bound.
// With `fused`, each step is one f32x4.relaxed_madd instead (relaxed SIMD,
// still 8 flops): the peak of the relaxed build's kernels, where the engine
// has relaxed SIMD.

import { uleb } from '../../scripts/relaxed-simd-opcodes.mjs';

const kV128 = 0x7b;
const simd = (op) => (op < 0x80 ? [0xfd, op] : [0xfd, (op & 0x7f) | 0x80, op >> 7]);
const kF32x4Add = simd(0xe4);
const kF32x4Mul = simd(0xe6);
const kF32x4RelaxedMadd = simd(0x105);
const kF32x4ExtractLane = simd(0x1f);
const kV128Const = simd(0x0c);

const section = (id, bytes) => [id, ...uleb(bytes.length), ...bytes];
const f32x4Const = (x) => [...kV128Const, ...new Uint8Array(Float32Array.of(x, x, x, x).buffer)];

/** Module exporting peak(iterations: i32) -> f32 with `accumulators` chains. */
export function peakModuleBytes(accumulators, { fused = false } = {}) {
  const param = 0;
  const m = 1;
  const c = 2;
  const acc = (i) => 3 + i;
  const body = [];
  body.push(...f32x4Const(0.5), 0x21, m, ...f32x4Const(1), 0x21, c);
  for (let i = 0; i < accumulators; ++i) body.push(...f32x4Const(i * 0.01), 0x21, acc(i));
  body.push(0x03, 0x40); // loop
  for (let i = 0; i < accumulators; ++i) {
    if (fused) body.push(0x20, acc(i), 0x20, m, 0x20, c, ...kF32x4RelaxedMadd, 0x21, acc(i));
    else body.push(0x20, acc(i), 0x20, m, ...kF32x4Mul, 0x20, c, ...kF32x4Add, 0x21, acc(i));
  }
  // param -= 1; continue while non-zero
  body.push(0x20, param, 0x41, 1, 0x6b, 0x22, param, 0x0d, 0);
  body.push(0x0b); // end loop
  // Return a lane of the sum so the work is observable (acc → 2 for m = 0.5, c = 1).
  body.push(0x20, acc(0));
  for (let i = 1; i < accumulators; ++i) body.push(0x20, acc(i), ...kF32x4Add);
  body.push(...kF32x4ExtractLane, 0, 0x0b);
  const locals = [1, ...uleb(accumulators + 2), kV128];
  const func = [...locals, ...body];
  // prettier-ignore
  return Uint8Array.from([
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, [1, 0x60, 1, 0x7f, 1, 0x7d]), // type (i32) -> f32
    ...section(3, [1, 0]),
    ...section(7, [1, 4, ...new TextEncoder().encode('peak'), 0x00, 0]),
    ...section(10, [1, ...uleb(func.length), ...func]),
  ]);
}

/**
 * `now` is the clock in ms (wall by default). Runs the kernel with 4 to 13 chains (14 spill registers on x86-64) and returns the best GFLOP/s.
 * @returns {{ gflops: number, accumulators: number, sweep: {accumulators:number, gflops:number}[] }}
 */
export async function measureSimdPeak({
  seconds = 0.25,
  repeats = 5,
  now = () => performance.now(),
  fused = false,
} = {}) {
  const sweep = [];
  for (const accumulators of [4, 8, 10, 12, 13]) {
    const { instance } = await WebAssembly.instantiate(peakModuleBytes(accumulators, { fused }));
    const peak = instance.exports.peak;
    const flopsPerIteration = accumulators * 8;
    // Calibrate the iteration count to ~`seconds` per call.
    let iterations = 1 << 16;
    for (;;) {
      const t0 = now();
      peak(iterations);
      const ms = now() - t0;
      if (ms > 20) {
        iterations = Math.min(2 ** 30, Math.round((iterations * seconds * 1000) / ms));
        break;
      }
      iterations *= 4;
    }
    let best = 0;
    for (let r = 0; r < repeats; ++r) {
      const t0 = now();
      const result = peak(iterations);
      const ms = now() - t0;
      if (!(Math.abs(result - 2 * accumulators) < 1e-3)) {
        throw new Error(`simd peak kernel returned ${result}, expected ${2 * accumulators}`);
      }
      best = Math.max(best, (iterations * flopsPerIteration) / ms / 1e6);
    }
    sweep.push({ accumulators, gflops: best });
  }
  const top = sweep.reduce((a, b) => (b.gflops > a.gflops ? b : a));
  return { gflops: top.gflops, accumulators: top.accumulators, sweep };
}
