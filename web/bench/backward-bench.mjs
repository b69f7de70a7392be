// The flash-style attention backward (engine.attentionBackward, trace: false)
// against the machine's WebAssembly SIMD peak (simd-peak.mjs), one thread:
// (1, H, T, d) queries, keys, values and dOutput, H = 8, d = 64, T = 1024,
// 2048 and 4096, no mask and causal.
//
// FLOP count: the backward's five T×T×d products per head, 2·T²·d each —
// the recomputed scores Q·Kᵀ, dP = dO·Vᵀ, dV = Pᵀ·dO, dQ = dS·K and
// dK = dSᵀ·Q — so 10·H·T²·d, halved for causal (the masked half is skipped).
// Two timings share that count: the backward given the forward's saved
// output and log-sum-exp (as training runs it: engine.attention with
// logSumExp: true ran first, untimed), and the backward that runs that
// forward itself (its time counted, its FLOPs not). The forward
// (engine.attention, 4·H·T²·d, halved for causal) is timed beside them.
//
//   node --experimental-wasm-relaxed-simd web/bench/backward-bench.mjs [--clock=cpu]
//        [--sizes=1024,2048,4096] [--reps=1]
import { distDir, loadAttnScope } from './attnscope-runner.mjs';
import { measureSimdPeak } from './simd-peak.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const sizes = String(args.sizes ?? '1024,2048,4096')
  .split(',')
  .map(Number);
const reps = Number(args.reps ?? 1);
const H = 8,
  d = 64;
const cpuClock = args.clock === 'cpu';
const now = cpuClock
  ? () => {
      const { user, system } = process.cpuUsage();
      return (user + system) / 1000;
    }
  : () => performance.now();

const engine = await loadAttnScope();
if (!engine) {
  console.error(`backward-bench: ${distDir}/node.js not found; run npm run build`);
  process.exit(1);
}
const fused = engine.simdArch.includes('relaxed');
const peak = await measureSimdPeak({ now, fused });
console.log(
  `backward-bench: H=${H}, d=${d}, simd ${engine.simdArch}, ${cpuClock ? 'CPU' : 'wall'} clock; ` +
    `SIMD peak ${peak.gflops.toFixed(1)} GFLOP/s (${fused ? 'relaxed_madd' : 'mul + add'} chains), ` +
    new Date().toISOString(),
);

let state = 1;
const random = (n) =>
  Float32Array.from({ length: n }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32 - 0.5;
  });
/** The best of `reps` runs of fn, in ms (one warm-up run first). */
function best(fn) {
  fn();
  let ms = Infinity;
  for (let r = 0; r < reps; r++) {
    const t0 = now();
    fn();
    ms = Math.min(ms, now() - t0);
  }
  return ms;
}

console.log(
  '\n| T | mask | backward ms (saved forward) | GFLOP/s | % of peak | ' +
    'with its own forward: ms | GFLOP/s | % of peak | forward GFLOP/s |',
);
console.log('|---|---|---|---|---|---|---|---|---|');
const percent = (gflops) => `${((100 * gflops) / peak.gflops).toFixed(0)} %`;
for (const T of sizes) {
  const n = H * T * d;
  const inputs = { q: random(n), k: random(n), v: random(n), shape: [1, H, T, d], trace: false };
  const dOutput = random(n);
  for (const causal of [false, true]) {
    const mask = causal ? 'causal' : 'none';
    const share = causal ? 0.5 : 1;
    const forward = engine.attention({ ...inputs, mask, logSumExp: true });
    const saved = { output: forward.output.data, logSumExp: forward.logSumExp.data };
    const savedMs = best(() => engine.attentionBackward({ ...inputs, mask, dOutput, ...saved }));
    const ownMs = best(() => engine.attentionBackward({ ...inputs, mask, dOutput }));
    const forwardMs = best(() => engine.attention({ ...inputs, mask }));
    const products = 10 * H * T * T * d * share;
    const savedGflops = products / savedMs / 1e6;
    const ownGflops = products / ownMs / 1e6;
    const forwardGflops = (4 * H * T * T * d * share) / forwardMs / 1e6;
    console.log(
      `| ${T} | ${mask} | ${savedMs.toFixed(0)} | ${savedGflops.toFixed(1)} | ${percent(savedGflops)} | ` +
        `${ownMs.toFixed(0)} | ${ownGflops.toFixed(1)} | ${percent(ownGflops)} | ${forwardGflops.toFixed(1)} |`,
    );
  }
}
