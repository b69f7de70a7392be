// The threaded build against onnxruntime-web with the same number of threads,
// in Node (threads-run.mjs holds the comparison; threads-browser.mjs runs it in
// Chromium).
//
//   node [--experimental-wasm-relaxed-simd] web/bench/threads-bench.mjs [--threads=N] [--sizes=256,1024,2048] [--rounds=7] [--scaling-t=1024] [--quick] [--out=dir]
//
// With Node 20's relaxed-SIMD flag (npm run bench passes it), attnscope runs
// its relaxed build as it does in Chromium, and its plain build beside it.
// Writes <out>/threads.json (default web/bench/results/).
import { createRequire } from 'node:module';
import os from 'node:os';
import { dirname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import * as ort from 'onnxruntime-web';

import { distDir } from './attnscope-runner.mjs';
import { runThreadsBench } from './threads-run.mjs';
import { measureHostPeak, threadsBenchOptions, writeThreadsRecord } from './threads-options.mjs';

const options = threadsBenchOptions(process.argv.slice(2), os.availableParallelism());

const { createAttnScope } = await import(pathToFileURL(resolve(distDir, 'node.js')).href);
ort.env.wasm.numThreads = options.threads;
ort.env.wasm.wasmPaths = dirname(createRequire(import.meta.url).resolve('onnxruntime-web')) + '/';
ort.env.logLevel = 'error';

console.log(
  `attnscope threaded vs onnxruntime-web ${ort.env.versions?.web ?? ''} in Node ${process.versions.node}, ` +
    `on ${os.availableParallelism()} hardware threads (${os.cpus()[0]?.model ?? 'unknown CPU'})`,
);
const peak = await measureHostPeak();
const result = await runThreadsBench({ ort, createAttnScope, ...options, log: console.log });

writeThreadsRecord({
  defaultDir: new URL('./results', import.meta.url).pathname,
  name: 'threads.json',
  runtime: `Node ${process.versions.node}`,
  options,
  peak,
  result,
});
