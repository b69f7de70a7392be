// What a runtime's threads do after its call returns, in Node: how busy the
// process keeps the cores while its main thread sleeps (process.cpuUsage
// counts every thread of the process), after an attnscope call on N threads
// and after an onnxruntime-web run on N threads, with its threads' spinning
// on (the default) and off (session.intra_op.allow_spinning = 0). Then the
// time of an attnscope call made right after an onnxruntime-web run, and
// after a quiet gap. threads-run.mjs waits longer than the spinning lasts
// before it times a runtime (kQuietMs).
//
//   node web/bench/threads-spin.mjs [--threads=N] [--T=256] [--reps=7]
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

import * as ort from 'onnxruntime-web';

import { distDir } from './attnscope-runner.mjs';
import { gaussian } from './gaussian.mjs';
import { onnxAttentionModel } from './onnx-model.mjs';
import { kQuietMs } from './threads-run.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const threads = Number(args.threads ?? os.availableParallelism());
const T = Number(args.T ?? 256);
const reps = Number(args.reps ?? 7);
const [H, d] = [8, 64];
/** Ends (ms after the call returned) of the windows in which the CPU use is measured. */
const windows = [2, 5, 10, 20, 50, 100, 150, 200];

const { createAttnScope } = await import(pathToFileURL(resolve(distDir, 'node.js')).href);
ort.env.wasm.numThreads = threads;
ort.env.wasm.wasmPaths = dirname(createRequire(import.meta.url).resolve('onnxruntime-web')) + '/';
ort.env.logLevel = 'error';

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const cpuMs = () => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
};

/** Cores kept busy in each window after `run` returns (medians over reps). */
async function busyAfter(run) {
  const busy = windows.map(() => []);
  for (let r = 0; r < reps; r++) {
    await sleep(300);
    await run();
    const end = performance.now();
    let [cpu, wall] = [cpuMs(), end];
    for (const [i, w] of windows.entries()) {
      await sleep(Math.max(0, end + w - performance.now()));
      const [cpuNow, wallNow] = [cpuMs(), performance.now()];
      busy[i].push((cpuNow - cpu) / (wallNow - wall));
      [cpu, wall] = [cpuNow, wallNow];
    }
  }
  return busy.map((b) => median(b).toFixed(2).padStart(5)).join(' ');
}

const q = gaussian(H * T * d, 1),
  k = gaussian(H * T * d, 2),
  v = gaussian(H * T * d, 3);
const dims = [1, H, T, d];
const feeds = {
  q: new ort.Tensor('float32', q, dims),
  k: new ort.Tensor('float32', k, dims),
  v: new ort.Tensor('float32', v, dims),
};
const engine = await createAttnScope({ threads, simd: 'simd128' });
const call = { q, k, v, shape: dims, trace: false, out: new Float32Array(H * T * d) };
const attnscope = async () => engine.attention(call);

console.log(
  `T = ${T}, H = ${H}, d = ${d}, ${threads} threads, medians of ${reps}; ` +
    `load average ${os.loadavg()[0].toFixed(2)}`,
);
console.log(`cores busy in the windows ending ${windows.join(', ')} ms after the call returned:`);
for (let i = 0; i < 20; i++) await attnscope();
console.log(`  attnscope                            ${await busyAfter(attnscope)}`);
for (const spinning of [true, false]) {
  const session = await ort.InferenceSession.create(onnxAttentionModel(H, T, d, false), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    ...(spinning ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
  });
  const run = async () => (await session.run(feeds)).output.dispose?.();
  for (let i = 0; i < 20; i++) await run();
  console.log(
    `  onnxruntime-web, spinning ${spinning ? 'on (default)' : 'off         '} ${await busyAfter(run)}`,
  );
  const line = [];
  for (const gap of [0, 10, 50, kQuietMs]) {
    const times = [];
    for (let r = 0; r < reps; r++) {
      await run();
      if (gap) await sleep(gap);
      const t0 = performance.now();
      await attnscope();
      times.push(performance.now() - t0);
    }
    line.push(`${gap} ms after: ${median(times).toFixed(2)} ms`);
  }
  console.log(`    an attnscope call ${line.join(', ')}`);
  await session.release();
}
process.exit(0);
