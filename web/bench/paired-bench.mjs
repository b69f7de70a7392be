// attnscope against one peer at one size, call by call: the two alternate (in
// turns, which one goes first), so that a slow spell of the machine lands on both
// sides of a pair, and each pair gives one ratio. Where the main benchmark's
// medians sit near a target, the spread of these ratios says how often the target
// holds. The peer is TF.js (wasm, one matMul per head) by default, or one of
// onnxruntime-web's three forms (the fastest peer depends on the CPU).
//
//   taskset -c 0 node web/bench/paired-bench.mjs [--T=4096] [--mask=none|causal] [--pairs=30]
//        [--peer=tfjs|ort-graph|ort-attention|ort-mha]
//
// Same inputs as attention-bench.mjs's cell for that T (H = 8, d = 64), process CPU time.
import { createAttnScopeAttention } from './attnscope-runner.mjs';
import { cpuMs, cpuName, gaussian } from './inputs.mjs';
import { attentionPeers } from './peers.mjs';
import { quantile } from './quartiles.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const T = Number(args.T ?? 4096);
const causal = (args.mask ?? 'none') === 'causal';
const pairs = Number(args.pairs ?? 30);
const peer = args.peer ?? 'tfjs';
const H = 8;
const d = 64;
if (!(Number.isInteger(T) && T > 0 && Number.isInteger(pairs) && pairs > 0)) {
  console.error('paired-bench: --T and --pairs must be positive integers');
  process.exit(2);
}
const peerEntry = attentionPeers.find((x) => x.id === peer);
if (!peerEntry) {
  console.error(
    `paired-bench: --peer must be one of ${attentionPeers.map((x) => x.id).join(', ')}`,
  );
  process.exit(2);
}

const n = H * T * d;
const problem = {
  q: gaussian(n, 1000 + T),
  k: gaussian(n, 2000 + T),
  v: gaussian(n, 3000 + T),
  H,
  T,
  d,
  causal,
};
const runtimes = {
  attnscope: await createAttnScopeAttention(problem),
  [peer]: await peerEntry.create(problem),
};
const timeOne = async (runner) => {
  const start = cpuMs();
  await runner.run();
  return cpuMs() - start;
};
// Warm-up: two runs each, and at least 0.5 s each, so that V8's optimising tier has
// replaced the first compilation of hot functions before anything is timed.
for (const r of Object.values(runtimes)) {
  const start = performance.now();
  for (let i = 0; i < 2 || performance.now() - start < 500; i++) await r.run();
}

const ms = { attnscope: [], [peer]: [] };
const ratios = [];
for (let i = 0; i < pairs; i++) {
  const order = i % 2 ? ['attnscope', peer] : [peer, 'attnscope'];
  const pair = {};
  for (const id of order) pair[id] = await timeOne(runtimes[id]);
  ms.attnscope.push(pair.attnscope);
  ms[peer].push(pair[peer]);
  ratios.push(pair[peer] / pair.attnscope);
}

const f = (x, digits = 0) => x.toFixed(digits);
console.log(
  `T = ${T}, ${causal ? 'causal' : 'no mask'}, H = ${H}, d = ${d}, ${pairs} pairs (process CPU time), ${cpuName()}`,
);
console.log(
  `attnscope: median ${f(quantile(ms.attnscope, 0.5), 1)} ms; ${peer}: median ${f(quantile(ms[peer], 0.5), 1)} ms`,
);
console.log(
  `${peer} / attnscope per pair: p10 ${f(quantile(ratios, 0.1), 3)}, median ${f(quantile(ratios, 0.5), 3)}, ` +
    `p90 ${f(quantile(ratios, 0.9), 3)}; ${ratios.filter((r) => r >= 1.5).length} of ${pairs} pairs at 1.5× or more`,
);
for (const r of Object.values(runtimes)) await r.release();
