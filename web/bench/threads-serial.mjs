// Where a threaded attention call's serial time goes at a short length: the
// whole call on 1 and on N threads, a small call (the fixed cost of a call:
// the bindings, allocations and the pool's two parallel steps), and the
// copies of q, k and v into shared memory and of the output out. Every piece
// is timed in each round, in turns (the order reversed every other round),
// in one Node process, so load from elsewhere lands on all of them; the
// table has each piece's median and quartiles over the rounds.
//
//   node web/bench/threads-serial.mjs [--dist=dir] [--threads=2] [--t=256] [--small-t=32]
//        [--rounds=20] [--calls=5] [--quiet=0] [--simd=simd128|relaxed]
//
// H = 8, d = 64, the fast path, wall clock. Prints the table; writes nothing.
import os from 'node:os';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { distDir } from './attnscope-runner.mjs';
import { gaussian } from './gaussian.mjs';
import { quartiles } from './quartiles.mjs';
import { timedBlock } from './timed-block.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const dist = typeof args.dist === 'string' ? args.dist : distDir;
const threads = Number(args.threads ?? 2);
const T = Number(args.t ?? 256);
const smallT = Number(args['small-t'] ?? 32);
const rounds = Number(args.rounds ?? 20);
const calls = Number(args.calls ?? 5);
const quietMs = Number(args.quiet ?? 0);
const simd = args.simd ?? 'simd128';
const [H, d] = [8, 64];

const { createAttnScope } = await import(pathToFileURL(resolve(dist, 'node.js')).href);
const many = await createAttnScope({ threads, simd });
const one = await createAttnScope({ threads: 1, simd });
if (many.threads !== threads) throw new Error(`the engine runs ${many.threads} threads`);

function attentionCall(engine, length, causal) {
  const n = H * length * d;
  const [q, k, v] = [gaussian(n, 1), gaussian(n, 2), gaussian(n, 3)];
  const call = {
    q,
    k,
    v,
    shape: [1, H, length, d],
    mask: causal ? 'causal' : 'none',
    trace: false,
  };
  return () => engine.attention(call);
}

// The copies the call path makes (web/lib/call.ts), on a SharedArrayBuffer
// like the threaded build's memory.
const n = H * T * d;
const heap = new Float32Array(new SharedArrayBuffer(4 * n * 4));
const inputs = [gaussian(n, 1), gaussian(n, 2), gaussian(n, 3)];
const pieces = [
  ['copy q, k, v in', () => inputs.forEach((x, i) => heap.set(x, i * n))],
  ['copy the output out', () => new Float32Array(heap.buffer, 3 * n * 4, n).slice()],
];
for (const causal of [false, true]) {
  const mask = causal ? 'causal' : 'none';
  pieces.push([`call T=${T} ${mask}, ${threads} threads`, attentionCall(many, T, causal)]);
  pieces.push([`call T=${T} ${mask}, 1 thread`, attentionCall(one, T, causal)]);
}
pieces.push([`call T=${smallT} none, ${threads} threads`, attentionCall(many, smallT, false)]);
pieces.push([`call T=${smallT} none, 1 thread`, attentionCall(one, smallT, false)]);

const block = (run) => timedBlock(run, { quietMs, calls });

for (const [, run] of pieces) for (let i = 0; i < 10; i++) run();
const ms = pieces.map(() => []);
for (let r = 0; r < rounds; r++) {
  const order = pieces.map((_, i) => (r % 2 ? pieces.length - 1 - i : i));
  for (const i of order) ms[i].push(await block(pieces[i][1]));
}
console.log(
  `${resolve(dist)}: H = ${H}, d = ${d}, ${simd}, ${rounds} rounds (${quietMs} ms quiet, 1 untimed + ${calls} timed runs per block); load average ${os.loadavg()[0].toFixed(2)}`,
);
for (const [i, [name]] of pieces.entries()) {
  const { median: m, q1, q3 } = quartiles(ms[i]);
  console.log(
    `${name.padEnd(34)} ${m.toFixed(3).padStart(7)} ms [${q1.toFixed(3)}, ${q3.toFixed(3)}]`,
  );
}
process.exit(0);
