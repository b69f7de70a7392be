// Does the worker pool pay? Times attnscope's fast-path attention in one
// thread (engine.attention) against createAttnScopePool (attention split by
// head across worker threads) on the same inputs, H = 8, d = 64. The two are
// timed alternately, run by run, so a burst of load on the machine hits both.
//
//   node web/bench/pool-bench.mjs [--quick] [--workers=2] [--min-split-flops=2.5e8] [--sizes=256,1024] [--out=dir]
//
// Wall-clock medians (the pool's point is to finish sooner, not to use less CPU),
// written to <out>/pool.json (default web/bench/results/).
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { distDir, loadAttnScope } from './attnscope-runner.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const quick = Boolean(args.quick);
const sizes = args.sizes
  ? String(args.sizes).split(',').map(Number)
  : quick
    ? [256, 512]
    : [256, 512, 1024, 2048, 4096];
const kHeads = 8;
const kHeadDim = 64;
const outDir = resolve(args.out ?? new URL('./results', import.meta.url).pathname);
const repsFor = (T) => (quick ? 5 : T <= 512 ? 21 : T <= 1024 ? 11 : T <= 2048 ? 7 : 5);

const engine = await loadAttnScope();
if (!engine) {
  console.error(`pool-bench: ${distDir}/node.js not found; run npm run build`);
  process.exit(1);
}
const fromDist = (file) => import(pathToFileURL(resolve(distDir, file)).href);
const { createAttnScopePool } = await fromDist('worker-node.js');
const { splitAttention } = await fromDist('attention-split.js');
const { kDefaultMinSplitFlops } = await fromDist('worker-pool.js');
const poolOptions = {};
if (args.workers) poolOptions.workers = Number(args.workers);
if (args['min-split-flops']) poolOptions.minSplitFlops = Number(args['min-split-flops']);
const pool = createAttnScopePool(poolOptions);
const minSplitFlops = poolOptions.minSplitFlops ?? kDefaultMinSplitFlops;
await pool.ready;

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const random = (n) => Float32Array.from({ length: n }, () => Math.random() * 2 - 1);

console.log(
  `attnscope pool: ${pool.size} workers on ${os.availableParallelism()} hardware threads ` +
    `(${os.cpus()[0]?.model ?? 'unknown CPU'}), H = ${kHeads}, d = ${kHeadDim}, wall-clock medians`,
);
console.log('   T  mask    | one thread ms | pool ms  | speed-up | split');
const rows = [];
for (const T of sizes) {
  const n = kHeads * T * kHeadDim;
  const [q, k, v] = [random(n), random(n), random(n)];
  for (const mask of ['none', 'causal']) {
    const call = { q, k, v, shape: [1, kHeads, T, kHeadDim], mask, trace: false };
    const single = () => engine.attention(call);
    const pooled = () => pool.attention(call);
    // Warm-up: V8 tiers hot wasm functions up in each thread separately.
    for (const run of [single, pooled]) {
      for (const until = performance.now() + 300; performance.now() < until;) await run();
    }
    const expected = single().output.data;
    const got = (await pooled()).output.data;
    if (!got.every((x, i) => Object.is(x, expected[i])))
      throw new Error(`T=${T} ${mask}: pool result differs`);

    const times = { single: [], pooled: [] };
    for (let i = 0; i < repsFor(T); i++) {
      let start = performance.now();
      single();
      times.single.push(performance.now() - start);
      start = performance.now();
      await pooled();
      times.pooled.push(performance.now() - start);
    }
    const row = {
      T,
      mask,
      singleMs: median(times.single),
      poolMs: median(times.pooled),
      split: splitAttention(call, pool.size, minSplitFlops) !== undefined,
    };
    row.speedup = row.singleMs / row.poolMs;
    rows.push(row);
    console.log(
      `${String(T).padStart(5)}  ${mask.padEnd(7)} | ${row.singleMs.toFixed(2).padStart(13)} | ` +
        `${row.poolMs.toFixed(2).padStart(8)} | ${row.speedup.toFixed(2).padStart(7)}× | ${row.split ? 'yes' : 'no (whole, one worker)'}`,
    );
  }
}
pool.terminate();

mkdirSync(outDir, { recursive: true });
const file = resolve(outDir, 'pool.json');
writeFileSync(
  file,
  JSON.stringify(
    {
      date: new Date().toISOString(),
      node: process.version,
      workers: pool.size,
      heads: kHeads,
      headDim: kHeadDim,
      rows,
    },
    null,
    2,
  ) + '\n',
);
console.log(`pool-bench: wrote ${file}`);
