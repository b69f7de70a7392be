// Two builds of the package's threaded engine against each other, paired, in
// one Node process: two dist/ directories (say, the pool with and without
// spinning, cmake/threads.cmake's ATTN_POOL_SPIN_US), each loaded as its own
// package. For each T and mask, rounds of one block per build, in turns (which
// build goes first alternates): a block waits --quiet ms without a call, makes
// one untimed call, then --calls timed ones back to back, and gives their
// median. Each round gives one ratio, A's block over B's; the table has their
// median and quartiles, so a burst of load from elsewhere lands on both sides.
//
//   node web/bench/threads-pair.mjs --a=dirA --b=dirB [--threads=2] [--sizes=256,1024]
//        [--rounds=20] [--quiet=150] [--calls=3] [--simd=simd128|relaxed]
//
// H = 8, d = 64, the fast path, wall clock. Prints the table; writes nothing.
import os from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { gaussian } from './gaussian.mjs';
import { quartiles } from './quartiles.mjs';
import { timedBlock } from './timed-block.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
if (typeof args.a !== 'string' || typeof args.b !== 'string') {
  console.error('threads-pair: --a=dir and --b=dir (two built dist/ directories) are required');
  process.exit(2);
}
const threads = Number(args.threads ?? 2);
const sizes = String(args.sizes ?? '256,1024')
  .split(',')
  .map(Number);
const rounds = Number(args.rounds ?? 20);
const quietMs = Number(args.quiet ?? 150);
const calls = Number(args.calls ?? 3);
const simd = args.simd ?? 'simd128';
const [H, d] = [8, 64];
const median = (xs) => quartiles(xs).median;

async function engineFrom(dir) {
  const { createAttnScope } = await import(pathToFileURL(resolve(dir, 'node.js')).href);
  const engine = await createAttnScope({ threads, simd });
  if (engine.threads !== threads)
    throw new Error(`${dir}: the engine runs ${engine.threads} threads`);
  return engine;
}
const builds = [
  { name: 'A', dir: args.a, engine: await engineFrom(args.a) },
  { name: 'B', dir: args.b, engine: await engineFrom(args.b) },
];

const block = (run) => timedBlock(run, { quietMs, calls });

console.log(`A = ${resolve(args.a)}\nB = ${resolve(args.b)}`);
console.log(
  `H = ${H}, d = ${d}, ${threads} threads, ${simd}, ${rounds} rounds of one block each ` +
    `(${quietMs} ms quiet, 1 untimed + ${calls} timed calls); load average ${os.loadavg()[0].toFixed(2)}`,
);
console.log('     T  mask    |   A ms |   B ms | A/B per round: median [q1, q3]');
for (const T of sizes) {
  for (const causal of [false, true]) {
    const n = H * T * d;
    const [q, k, v] = [gaussian(n, 1), gaussian(n, 2), gaussian(n, 3)];
    const runs = builds.map(({ engine }) => {
      const call = { q, k, v, shape: [1, H, T, d], mask: causal ? 'causal' : 'none', trace: false };
      return () => engine.attention(call);
    });
    const [outA, outB] = runs.map((run) => run().output.data);
    if (!outA.every((x, i) => Object.is(x, outB[i])))
      throw new Error(`T = ${T}: the two builds' outputs differ`);
    for (const run of runs) for (let i = 0; i < 20; i++) run();
    const ms = [[], []];
    const ratios = [];
    for (let r = 0; r < rounds; r++) {
      const order = r % 2 ? [1, 0] : [0, 1];
      for (const i of order) ms[i].push(await block(runs[i]));
      ratios.push(ms[0][r] / ms[1][r]);
    }
    const { median: m, q1, q3 } = quartiles(ratios);
    console.log(
      `${String(T).padStart(6)}  ${(causal ? 'causal' : 'none').padEnd(7)} | ${median(ms[0]).toFixed(2).padStart(6)} | ${median(ms[1]).toFixed(2).padStart(6)} | ${m.toFixed(2)} [${q1.toFixed(2)}, ${q3.toFixed(2)}]`,
    );
  }
}
process.exit(0);
