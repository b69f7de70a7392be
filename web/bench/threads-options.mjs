// The command line and the results file of the threaded comparison, shared by
// its Node and Chromium runners.
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { resolve } from 'node:path';

import { measureSimdPeak, peakModuleBytes } from './simd-peak.mjs';

/** --threads=N --sizes=a,b --rounds=R --scaling-t=T --quick --out=dir → options. */
export function threadsBenchOptions(argv, hardwareThreads) {
  const args = Object.fromEntries(
    argv.map((a) => {
      const [k, v] = a.replace(/^--/, '').split('=');
      return [k, v ?? true];
    }),
  );
  const quick = Boolean(args.quick);
  const threads = Number(args.threads ?? hardwareThreads);
  if (!Number.isInteger(threads) || threads < 1)
    throw new Error(`--threads must be a whole number ≥ 1, got ${args.threads}`);
  if (args.reps !== undefined) throw new Error('--reps is now --rounds (rounds of one block each)');
  const rounds = Number(args.rounds ?? (quick ? 3 : 7));
  if (!Number.isInteger(rounds) || rounds < 1)
    throw new Error(`--rounds must be a whole number ≥ 1, got ${args.rounds}`);
  return {
    threads,
    sizes: args.sizes
      ? String(args.sizes).split(',').map(Number)
      : quick
        ? [256]
        : [256, 1024, 2048],
    rounds,
    scalingT: Number(args['scaling-t'] ?? (quick ? 256 : 1024)),
    out: args.out,
  };
}

/**
 * This host's wasm SIMD peak on one thread, in GFLOP/s: mul + add, and the
 * relaxed madd where this Node runs relaxed SIMD (else null). Printed with
 * each threaded run and kept in its record: the same build's times move with
 * the host's speed from one day to the next, and the peak says how fast it was.
 */
export async function measureHostPeak() {
  const plain = (await measureSimdPeak()).gflops;
  const fused = WebAssembly.validate(peakModuleBytes(4, { fused: true }))
    ? (await measureSimdPeak({ fused: true })).gflops
    : null;
  console.log(
    `wasm SIMD peak on one thread (Node): ${plain.toFixed(1)} GFLOP/s mul + add` +
      (fused === null ? '' : `, ${fused.toFixed(1)} relaxed madd`),
  );
  return { gflops: plain, fusedGflops: fused };
}

/** Writes one run's `result` as <options.out or defaultDir>/<name> and says where. */
export function writeThreadsRecord({ defaultDir, name, runtime, options, peak, result }) {
  const dir = resolve(options.out ?? defaultDir);
  mkdirSync(dir, { recursive: true });
  const file = resolve(dir, name);
  const record = {
    date: new Date().toISOString(),
    runtime,
    cpu: os.cpus()[0]?.model,
    hardwareThreads: os.availableParallelism(),
    threads: options.threads,
    rounds: options.rounds,
    scalingT: options.scalingT,
    simdPeak: peak,
    ...result,
  };
  writeFileSync(file, JSON.stringify(record, null, 2) + '\n');
  console.log(`\nwritten: ${file}`);
}
