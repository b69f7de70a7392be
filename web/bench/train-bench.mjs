// A training step (forward, backward, AdamW) of a small GPT-2 in attnscope
// (the package's trainer, wasm, one thread) against TF.js with its wasm
// backend training the same model (train-tfjs.mjs), and native attnscope's
// time for the same step (attnscope_bench train, when built).
//
// Both runtimes start from the same weights (attnscope's initialisation,
// read back from model.save()) and take the same batches in the same order,
// so their losses follow one trajectory: the loss of step 0 must agree
// before any time counts, and the later steps' losses are compared too.
// Timed steps run in passes, attnscope's then TF.js's, so that a slow spell
// of a shared machine falls on both.
//
//   node web/bench/train-bench.mjs [--clock=cpu] [--layers=2] [--heads=4] [--dModel=128]
//        [--vocab=512] [--T=128] [--batch=8] [--passes=3] [--steps=2] [--native=path | --native=none]
//
// T is the number of positions that predict: each sequence holds T + 1 tokens.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { distDir, loadAttnScope } from './attnscope-runner.mjs';
import { tfjsVersion } from './tfjs-runner.mjs';
import { createTfjsTrainer } from './train-tfjs.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const num = (name, fallback) => Number(args[name] ?? fallback);
const config = {
  layers: num('layers', 2),
  heads: num('heads', 4),
  dModel: num('dModel', 128),
  vocabSize: num('vocab', 512),
  contextLength: num('T', 128),
};
const T = config.contextLength;
const B = num('batch', 8);
const passes = num('passes', 3);
const stepsPerPass = num('steps', 2);
const clockName = args.clock === 'cpu' ? 'cpu' : 'wall';
const optimizer = { lr: 1e-3, betas: [0.9, 0.95], eps: 1e-8, weightDecay: 0.1, clip: 1 };
const defaultNative = new URL('../../build/bench/cpp/bench/attnscope_bench', import.meta.url)
  .pathname;
const nativePath = args.native === 'none' ? null : String(args.native ?? defaultNative);

const engine = await loadAttnScope();
if (!engine) {
  console.error(`train-bench: ${distDir}/node.js not found; run npm run build`);
  process.exit(1);
}
const { parseSafetensors, decodeTensor } = await import(
  pathToFileURL(resolve(distDir, 'safetensors.js')).href
);
console.log(
  `train-bench: ${JSON.stringify(config)}, B=${B}, T=${T} positions, AdamW ${JSON.stringify(optimizer)}, ` +
    `simd ${engine.simdArch}, TF.js ${tfjsVersion()} (wasm), timed by ${clockName} clock, ` +
    `${new Date().toISOString()}`,
);

/** Seeded batches, one per step: B sequences of T + 1 token ids. */
let state = 20261126;
const batches = Array.from({ length: 1 + passes * stepsPerPass }, () =>
  Int32Array.from({ length: B * (T + 1) }, () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % config.vocabSize;
  }),
);

const model = engine.createModel({ ...config, seed: 1 });
// The initial weights, as TF.js variables will hold them.
const file = model.save();
const weights = new Map();
for (const entry of parseSafetensors(file).tensors) {
  const data = new Float32Array(entry.shape.reduce((a, b) => a * b, 1));
  decodeTensor(file, entry, data);
  weights.set(entry.name.replace(/^transformer\./, ''), { data, shape: entry.shape });
}
const trainer = model.trainer(optimizer);
const tfjs = await createTfjsTrainer(weights, config, optimizer);
const runtimes = {
  attnscope: (tokens) => trainer.step({ tokens, shape: [B, T + 1] }).loss,
  'tfjs-wasm': (tokens) => tfjs.step(tokens, B, T + 1),
};

/** Runs one step of each runtime on batch `i`; returns { loss, wall, cpu } per runtime. */
function timedStep(name, i) {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  const loss = runtimes[name](batches[i]);
  const used = process.cpuUsage(cpu);
  return { loss, wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 };
}

const losses = { attnscope: [], 'tfjs-wasm': [] };
const times = { attnscope: [], 'tfjs-wasm': [] };
// Step 0 is the check (and the warm-up): the same loss from the same weights.
for (const name of Object.keys(runtimes)) losses[name].push(timedStep(name, 0).loss);
const [ours0, theirs0] = [losses.attnscope[0], losses['tfjs-wasm'][0]];
console.log(`step 0 loss: attnscope ${ours0.toFixed(6)}, tfjs-wasm ${theirs0.toFixed(6)}`);
if (!(Math.abs(ours0 - theirs0) < 1e-4 * Math.abs(ours0))) {
  throw new Error(`train-bench: TF.js's step-0 loss ${theirs0} differs from attnscope's ${ours0}`);
}
for (let pass = 0; pass < passes; pass++) {
  for (const name of Object.keys(runtimes)) {
    for (let s = 0; s < stepsPerPass; s++) {
      const t = timedStep(name, 1 + pass * stepsPerPass + s);
      losses[name].push(t.loss);
      times[name].push(t);
    }
  }
}
// The trajectories: the same updates give the same losses, up to float32
// rounding that AdamW's normalised steps carry forward.
let worst = 0;
for (let i = 1; i < losses.attnscope.length; i++) {
  worst = Math.max(worst, Math.abs(losses.attnscope[i] - losses['tfjs-wasm'][i]));
}
console.log(
  `losses after step 0: attnscope ${losses.attnscope
    .slice(1)
    .map((x) => x.toFixed(4))
    .join(' ')}; ` + `max |Δ| against tfjs-wasm ${worst.toExponential(1)}`,
);
if (!(worst < 1e-2)) throw new Error(`train-bench: the loss trajectories differ by ${worst}`);
tfjs.release();
model.dispose();

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const perStep = Object.fromEntries(
  Object.entries(times).map(([name, ts]) => [
    name,
    { wall: median(ts.map((t) => t.wall)), cpu: median(ts.map((t) => t.cpu)) },
  ]),
);

/** Native attnscope: its benchmark's median thread CPU time per step, or null. */
function nativeStep() {
  if (!nativePath || !existsSync(nativePath)) return null;
  const out = execFileSync(
    nativePath,
    ['train', config.layers, config.heads, config.dModel, config.vocabSize, T, B].map(String),
    { encoding: 'utf8' },
  );
  const match = /: ([\d.]+) ms median/.exec(out);
  if (!match) throw new Error(`train-bench: unexpected output of ${nativePath}:\n${out}`);
  return { line: out.trim().split('\n').at(-1), ms: Number(match[1]) };
}
const native = nativeStep();

const tokensPerStep = B * T;
const row = (name, ms) =>
  `| ${name} | ${ms.toFixed(1)} | ${((tokensPerStep / ms) * 1000).toFixed(0)} |`;
console.log(`\n| runtime (one thread) | ms/step (${clockName}) | tokens/s |`);
console.log('|---|---|---|');
for (const [name, t] of Object.entries(perStep)) console.log(row(name, t[clockName]));
if (native) console.log(row('attnscope native (thread CPU time)', native.ms));
const ours = perStep.attnscope[clockName];
console.log(
  `\nattnscope wasm ÷ tfjs-wasm: ${(perStep['tfjs-wasm'][clockName] / ours).toFixed(2)}× faster ` +
    `(median of ${passes * stepsPerPass} steps each, ${clockName} time)`,
);
if (native) {
  console.log(
    `native ÷ wasm: ${(ours / native.ms).toFixed(2)}× faster (${native.line.replace(/^train step /, '')})`,
  );
} else {
  console.log(
    `native: ${nativePath ?? 'skipped'} not run (scripts/bench-native.sh builds it into build/bench)`,
  );
}
