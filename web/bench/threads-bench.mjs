// The threaded build against onnxruntime-web with the same number of threads
// (numThreads), H = 8, d = 64, causal and not, and attnscope's scaling curve
// over 1..N threads (1 = the single-thread build). Wall-clock medians; the
// two runtimes are timed alternately, run by run, so a burst of load on the
// machine hits both.
//
//   node web/bench/threads-bench.mjs [--threads=N] [--sizes=256,1024,2048] [--reps=7] [--quick] [--out=dir]
//
// Writes <out>/threads.json (default web/bench/results/).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import * as ort from 'onnxruntime-web';

import { distDir } from './attnscope-runner.mjs';
import { gaussian } from './inputs.mjs';
import { multiHeadAttentionModel, onnxAttentionModel } from './onnx-model.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const quick = Boolean(args.quick);
const threads = Number(args.threads ?? os.availableParallelism());
const sizes = args.sizes
  ? String(args.sizes).split(',').map(Number)
  : quick
    ? [256]
    : [256, 1024, 2048];
const reps = Number(args.reps ?? (quick ? 3 : 7));
const [H, d] = [8, 64];
const outDir = resolve(args.out ?? new URL('./results', import.meta.url).pathname);

const { createAttnScope } = await import(pathToFileURL(resolve(distDir, 'node.js')).href);
ort.env.wasm.numThreads = threads;
ort.env.wasm.wasmPaths = dirname(createRequire(import.meta.url).resolve('onnxruntime-web')) + '/';
ort.env.logLevel = 'error';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const engines = new Map();
const engineWith = async (n) => {
  if (!engines.has(n)) engines.set(n, await createAttnScope({ threads: n, simd: 'simd128' }));
  return engines.get(n);
};

/** ms of one attnscope call and of the faster of two ONNX graphs, alternately. */
async function timePair(T, causal, n, withOrt) {
  const q = gaussian(H * T * d, 1),
    k = gaussian(H * T * d, 2),
    v = gaussian(H * T * d, 3);
  const engine = await engineWith(n);
  const call = {
    q,
    k,
    v,
    shape: [1, H, T, d],
    mask: causal ? 'causal' : 'none',
    trace: false,
    out: new Float32Array(H * T * d),
  };
  const sessions = [];
  if (withOrt) {
    for (const [build, tokens] of [
      [onnxAttentionModel, false],
      [multiHeadAttentionModel, true],
    ]) {
      try {
        const session = await ort.InferenceSession.create(build(H, T, d, causal), {
          executionProviders: ['wasm'],
          graphOptimizationLevel: 'all',
          intraOpNumThreads: threads,
        });
        // The token layout's inputs hold the same numbers in another order: equal work.
        const dims = tokens ? [1, T, H * d] : [1, H, T, d];
        sessions.push({
          session,
          feeds: {
            q: new ort.Tensor('float32', q, dims),
            k: new ort.Tensor('float32', k, dims),
            v: new ort.Tensor('float32', v, dims),
          },
          times: [],
        });
      } catch {
        // A graph this onnxruntime-web build cannot run is left out.
      }
    }
  }
  const ours = [];
  for (let r = 0; r < reps + 1; r++) {
    let t0 = performance.now();
    engine.attention(call);
    if (r) ours.push(performance.now() - t0);
    for (const s of sessions) {
      t0 = performance.now();
      const out = await s.session.run(s.feeds);
      if (r) s.times.push(performance.now() - t0);
      out.output.dispose?.();
    }
  }
  for (const s of sessions) await s.session.release();
  const ortMs = sessions.length ? Math.min(...sessions.map((s) => median(s.times))) : NaN;
  return { attnscope: median(ours), ort: ortMs };
}

console.log(
  `attnscope threaded vs onnxruntime-web ${ort.env.versions?.web ?? ''}, ${threads} threads each, ` +
    `on ${os.availableParallelism()} hardware threads (${os.cpus()[0]?.model ?? 'unknown CPU'}), H = ${H}, d = ${d}, medians of ${reps}`,
);
console.log('     T  mask    | attnscope ms | ORT-web ms | ratio');
const table = [];
for (const T of sizes) {
  for (const causal of [false, true]) {
    const r = await timePair(T, causal, threads, true);
    table.push({ T, causal, ...r });
    console.log(
      `${String(T).padStart(6)}  ${(causal ? 'causal' : 'none').padEnd(7)} | ${r.attnscope.toFixed(2).padStart(12)} | ${r.ort.toFixed(2).padStart(10)} | ${(r.ort / r.attnscope).toFixed(2)}×`,
    );
  }
}

const scalingT = Number(args['scaling-t'] ?? (quick ? 256 : 1024));
console.log(`\nScaling at T = ${scalingT} (1 = the single-thread build)`);
console.log(' threads | none ms | speed-up | causal ms | speed-up');
const scaling = [];
for (let n = 1; n <= threads; n++) {
  const none = (await timePair(scalingT, false, n, false)).attnscope;
  const causal = (await timePair(scalingT, true, n, false)).attnscope;
  scaling.push({ threads: n, none, causal });
  const [base] = scaling;
  console.log(
    `${String(n).padStart(8)} | ${none.toFixed(2).padStart(7)} | ${(base.none / none).toFixed(2).padStart(7)}× | ${causal.toFixed(2).padStart(9)} | ${(base.causal / causal).toFixed(2)}×`,
  );
}

mkdirSync(outDir, { recursive: true });
const file = resolve(outDir, 'threads.json');
writeFileSync(
  file,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      cpu: os.cpus()[0]?.model,
      hardwareThreads: os.availableParallelism(),
      threads,
      H,
      d,
      reps,
      table,
      scalingT,
      scaling,
    },
    null,
    2,
  ) + '\n',
);
console.log(`\nwritten: ${file}`);
