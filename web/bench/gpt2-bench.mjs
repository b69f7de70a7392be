// GPT-2 in the package against its peers: a GPT-2-small-shaped model (12
// layers, 12 heads, C = 768, V = 50 257, 1 024 positions) with seeded random
// weights, written here as a .safetensors file, then timed in attnscope
// (loading the file into wasm memory, forward passes without trace at T = 128
// and 512, generation through the key/value cache from 128 to 256 tokens) and
// the same forward passes and generation in onnxruntime-web (the network as an
// ONNX graph, gpt2-onnx.mjs) and TF.js's wasm backend (gpt2-peers.mjs), all on
// one thread, one runtime after the other. The peers' logits are checked
// against attnscope's before their times count.
// Each time is given as wall clock and as this process's CPU time (user +
// system): on a shared machine the second is the one to compare.
//
//   node web/bench/gpt2-bench.mjs [--quick] [--layers=12] [--heads=12] [--dModel=768]
//        [--vocab=50257] [--context=1024] [--sizes=128,512] [--prompt=128] [--new=128]
//        [--reps=3] [--warmup=1] [--peers=ort,tfjs | --peers=none] [--threads=1]
//
// --warmup=N: untimed forward passes before each runtime's timed ones at each
// size. A wasm module's first calls run V8's baseline code while its optimised
// code compiles on other threads, whose CPU time this process's clock counts;
// both runtimes get the same warm-up, and every timed pass is printed.
// --quick: 2 layers, T = 64, 16 new tokens (a smoke test of a few seconds).
// --threads=N: attnscope's threaded build and onnxruntime-web on N threads
// each (TF.js stays on one); then the wall-clock figures are the ones to read,
// CPU time adds up every thread.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { distDir, loadAttnScope } from './attnscope-runner.mjs';
import { createOrtGpt2, createTfjsGpt2 } from './gpt2-peers.mjs';
import { gpt2Header, seededUniform } from './gpt2-random-file.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const quick = Boolean(args.quick);
const num = (name, full, small) => Number(args[name] ?? (quick ? small : full));
const config = {
  layers: num('layers', 12, 2),
  heads: num('heads', 12, 12),
  dModel: num('dModel', 768, 768),
  vocabSize: num('vocab', 50257, 50257),
  contextLength: num('context', 1024, 1024),
};
const sizes = String(args.sizes ?? (quick ? '64' : '128,512'))
  .split(',')
  .map(Number);
const prompt = num('prompt', 128, 32);
const newTokens = num('new', 128, 16);
const reps = num('reps', 3, 1);
const warmup = num('warmup', 1, 0);
const threads = Number(args.threads ?? 1);
const peers = String(args.peers ?? 'ort,tfjs')
  .split(',')
  .filter((p) => p && p !== 'none');

/**
 * The file, written in place: weights ~ N(0, 0.02) as GPT-2's initialisation,
 * LayerNorm gains 1. Returns it with a view of each tensor inside it, which the
 * peers take as their weights (no second copy in JavaScript).
 */
function randomGpt2File() {
  const { list, text, dataBytes: offset } = gpt2Header(config);
  const file = new Uint8Array(8 + text.length + offset);
  new DataView(file.buffer).setBigUint64(0, BigInt(text.length), true);
  file.set(text, 8);
  const data = new Float32Array(file.buffer, 8 + text.length, offset / 4);
  const uniform = seededUniform(12345);
  let at = 0;
  const weights = new Map();
  for (const [name, shape] of list) {
    const n = shape.reduce((a, b) => a * b, 1);
    const gain = /ln_.*\.weight$/.test(name);
    // A uniform of the same spread as N(0, 0.02): 0.02·√12 ≈ 0.069.
    for (let i = 0; i < n; i++) data[at + i] = gain ? 1 : 0.069 * uniform();
    weights.set(name, { data: data.subarray(at, at + n), shape });
    at += n;
  }
  return { file, weights };
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const mib = (bytes) => (bytes / 2 ** 20).toFixed(0);

const engine = await loadAttnScope('auto', threads);
if (!engine) {
  console.error(`gpt2-bench: ${distDir}/node.js not found; run npm run build`);
  process.exit(1);
}
console.log(
  `gpt2-bench: ${JSON.stringify(config)}, simd ${engine.simdArch}, ${engine.threads} thread(s), ` +
    new Date().toISOString(),
);
/** Wall-clock and CPU milliseconds since `start` (a `now()`). */
const now = () => ({ wall: performance.now(), cpu: process.cpuUsage() });
function since(start) {
  const cpu = process.cpuUsage(start.cpu);
  return { wall: performance.now() - start.wall, cpu: (cpu.user + cpu.system) / 1000 };
}
const show = (t) => `${t.wall.toFixed(0)} ms wall, ${t.cpu.toFixed(0)} ms CPU`;

const { file, weights } = randomGpt2File();
// Loading, measured in a fresh process reading the file from disk: its peak
// resident memory over its baseline, against the file's size.
const dir = mkdtempSync(join(tmpdir(), 'attnscope-gpt2-bench-'));
try {
  const path = join(dir, 'gpt2.safetensors');
  writeFileSync(path, file);
  const load = JSON.parse(
    execFileSync(
      process.execPath,
      [new URL('./gpt2-load-memory.mjs', import.meta.url).pathname, path],
      {
        encoding: 'utf8',
      },
    ),
  );
  const peak = load.peakRss - load.baselineRss;
  console.log(
    `load (loadModelFromBlob from disk, a fresh process): ${mib(file.length)} MiB file in ` +
      `${show({ wall: load.wallMs, cpu: load.cpuMs })}; peak memory ${mib(peak)} MiB over the ` +
      `engine's baseline = ${(peak / file.length).toFixed(2)}× the file`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
let start = now();
const model = engine.loadModel(file);
console.log(`load (loadModel from bytes in memory): ${show(since(start))}`);

const tokens = (n) => Array.from({ length: n }, (_, i) => (i * 7919) % config.vocabSize);
/**
 * Median wall and CPU time of `reps` runs of `fn` after `warmup` untimed ones,
 * its last result, and each run's times as text.
 */
async function timed(fn) {
  for (let r = 0; r < warmup; r++) await fn();
  const times = [];
  let result;
  for (let r = 0; r < reps; r++) {
    const start = now();
    result = await fn();
    times.push(since(start));
  }
  const each = times.map((t) => `${t.cpu.toFixed(0)}`).join(', ');
  return {
    wall: median(times.map((t) => t.wall)),
    cpu: median(times.map((t) => t.cpu)),
    result,
    each,
  };
}
/**
 * The clock the summary compares: CPU time on one thread (steadier on a shared
 * machine), wall clock on several (CPU time adds up every thread).
 */
const clock = threads > 1 ? 'wall' : 'cpu';
/** Per runtime: { forward: { [T]: time }, decode: tokens/s on `clock`, tokens }. */
const results = { attnscope: { forward: {} } };
const expected = {};
for (const T of sizes) {
  const t = await timed(() => model.forward({ tokens: tokens(T), trace: false }).logits.data);
  results.attnscope.forward[T] = t;
  expected[T] = t.result;
  console.log(
    `attnscope forward T=${T} (no trace): median of ${reps} ${show(t)} (CPU ms: ${t.each})`,
  );
}
const traced = Math.min(64, config.contextLength);
start = now();
model.forward({ tokens: tokens(traced), trace: true });
console.log(`attnscope forward T=${traced} (trace): ${show(since(start))}`);
// A page's token edits at T = 64 (what the site runs per edit): a word typed at
// the end, then one changed in the middle, each after the previous text ran.
const edited = tokens(traced);
model.forward({ tokens: edited.slice(0, traced - 1), trace: true, reusePrefix: true });
start = now();
model.forward({ tokens: edited, trace: true, reusePrefix: true });
const appended = since(start);
edited[traced / 2] = (edited[traced / 2] + 1) % config.vocabSize;
start = now();
model.forward({ tokens: edited, trace: true, reusePrefix: true });
console.log(
  `attnscope token edit at T=${traced} (trace, reusePrefix): a token appended ${show(appended)}; ` +
    `one changed at ${traced / 2} ${show(since(start))}`,
);

const perSecond = (count, ms) => (count - 1) / (ms / 1000);
let first;
const { tokens: generated } = model.generate({
  tokens: tokens(prompt),
  maxNewTokens: newTokens,
  onToken: () => void (first ??= now()),
});
const decode = since(first);
results.attnscope.decode = perSecond(generated.length, decode[clock]);
results.attnscope.tokens = generated;
console.log(
  `attnscope generate ${prompt} → ${prompt + generated.length}: after the first new token ` +
    `${perSecond(generated.length, decode.wall).toFixed(1)} tokens/s wall, ` +
    `${perSecond(generated.length, decode.cpu).toFixed(1)} tokens/s CPU`,
);
model.dispose();

const makers = { ort: ['onnxruntime-web', createOrtGpt2], tfjs: ['tfjs-wasm', createTfjsGpt2] };
for (const key of peers) {
  const [label, create] = makers[key] ?? [];
  if (!create) throw new Error(`gpt2-bench: unknown peer ${key} (expected ort, tfjs or none)`);
  start = now();
  const peer = await create(weights, config, threads);
  console.log(`${label}: ready in ${show(since(start))}`);
  results[label] = { forward: {} };
  for (const T of sizes) {
    const t = await timed(() => peer.forward(tokens(T)));
    let worst = 0;
    for (let i = 0; i < t.result.length; i++)
      worst = Math.max(worst, Math.abs(t.result[i] - expected[T][i]));
    // Random weights give logits of order 1: float32 runtimes agree to ~1e-4.
    if (!(worst < 1e-2))
      throw new Error(`${label} forward T=${T} differs from attnscope by ${worst}`);
    results[label].forward[T] = t;
    console.log(
      `${label} forward T=${T}: median of ${reps} ${show(t)} (CPU ms: ${t.each}; ` +
        `max |Δlogit| ${worst.toExponential(1)})`,
    );
  }
  const g = await peer.generate(tokens(prompt), generated.length);
  results[label].decode = perSecond(g.tokens.length, g.decode[clock]);
  const same = g.tokens.every((x, i) => x === generated[i]);
  console.log(
    `${label} generate ${prompt} → ${prompt + g.tokens.length}: after the first new token ` +
      `${perSecond(g.tokens.length, g.decode.wall).toFixed(1)} tokens/s wall, ` +
      `${perSecond(g.tokens.length, g.decode.cpu).toFixed(1)} tokens/s CPU, ` +
      `${same ? 'the same tokens as attnscope' : 'other tokens than attnscope (near-tied logits)'}`,
  );
  await peer.release();
}

if (peers.length) {
  const labels = Object.keys(results).slice(1);
  console.log('\n| case | attnscope | ' + labels.join(' | ') + ' | attnscope ÷ fastest peer |');
  console.log('|---|---|' + labels.map(() => '---|').join('') + '---|');
  for (const T of sizes) {
    const ours = results.attnscope.forward[T][clock];
    const theirs = labels.map((l) => results[l].forward[T][clock]);
    console.log(
      `| forward T=${T}, ms ${clock} | ${ours.toFixed(0)} | ${theirs.map((x) => x.toFixed(0)).join(' | ')} | ` +
        `${(Math.min(...theirs) / ours).toFixed(2)}× |`,
    );
  }
  const ours = results.attnscope.decode;
  const theirs = labels.map((l) => results[l].decode);
  console.log(
    `| generate ${prompt}→${prompt + newTokens}, tokens/s ${clock} | ${ours.toFixed(1)} | ` +
      `${theirs.map((x) => x.toFixed(1)).join(' | ')} | ${(ours / Math.max(...theirs)).toFixed(2)}× |`,
  );
}
