// The threaded build against onnxruntime-web with the same number of threads,
// in Node (threads-run.mjs holds the comparison; threads-browser.mjs runs it in
// Chromium).
//
//   node web/bench/threads-bench.mjs [--threads=N] [--sizes=256,1024,2048] [--reps=7] [--scaling-t=1024] [--quick] [--out=dir]
//
// Writes <out>/threads.json (default web/bench/results/).
import { mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import * as ort from 'onnxruntime-web';

import { distDir } from './attnscope-runner.mjs';
import { runThreadsBench } from './threads-run.mjs';
import { threadsBenchOptions } from './threads-options.mjs';

const options = threadsBenchOptions(process.argv.slice(2), os.availableParallelism());
const outDir = resolve(options.out ?? new URL('./results', import.meta.url).pathname);

const { createAttnScope } = await import(pathToFileURL(resolve(distDir, 'node.js')).href);
ort.env.wasm.numThreads = options.threads;
ort.env.wasm.wasmPaths = dirname(createRequire(import.meta.url).resolve('onnxruntime-web')) + '/';
ort.env.logLevel = 'error';

const engines = new Map();
const engineWith = async (n) => {
  if (!engines.has(n)) engines.set(n, await createAttnScope({ threads: n, simd: 'simd128' }));
  return engines.get(n);
};

console.log(
  `attnscope threaded vs onnxruntime-web ${ort.env.versions?.web ?? ''} in Node ${process.versions.node}, ` +
    `on ${os.availableParallelism()} hardware threads (${os.cpus()[0]?.model ?? 'unknown CPU'})`,
);
const result = await runThreadsBench({ ort, engineWith, ...options, log: console.log });

mkdirSync(outDir, { recursive: true });
const file = resolve(outDir, 'threads.json');
const record = {
  date: new Date().toISOString(),
  runtime: `Node ${process.versions.node}`,
  cpu: os.cpus()[0]?.model,
  hardwareThreads: os.availableParallelism(),
  threads: options.threads,
  reps: options.reps,
  scalingT: options.scalingT,
  ...result,
};
writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
console.log(`\nwritten: ${file}`);
