// The decode step, Tq = 1, Tk = 4096, H = 32, Hkv = 8, d = 128, causal: µs per step and the
// bytes of K and V (32 MiB) read per µs, against the memory copy bandwidth the same number of
// threads reaches (copy-bandwidth.mjs), for
//   1 thread   the package (single-thread build; each engine.attention call copies K and V
//              into wasm memory, counted once here although the call moves them twice) and
//              the core alone (core-probe.cpp: the cache already in wasm memory, as a model's is)
//   N threads  the same through the threaded package and the threaded probe, N = every
//              hardware thread, against N workers copying at once.
// The copy and the step run in interleaved rounds (which goes first alternates), so a busy
// spell of a shared machine lands on both; each round gives one fraction of the copy rate (the
// fastest copy variant of that round), printed as the median with its quartiles. Wall clock
// throughout: process CPU time would add up the threads.
import os from 'node:os';

import { attentionArgs } from './inputs.mjs';
import { loadAttnScope } from './attnscope-runner.mjs';
import { createCoreDecode, loadCoreProbe } from './core-probe.mjs';
import { copyTimer, parallelCopyTimer } from './copy-bandwidth.mjs';
import { quartiles } from './quartiles.mjs';
import { warmUp } from './warm-up.mjs';

export const decodeShape = { H: 32, Hkv: 8, Tq: 1, Tk: 4096, d: 128 };
const kvBytes = 2 * decodeShape.Hkv * decodeShape.Tk * decodeShape.d * 4;

const median = (xs) => quartiles(xs).median;
const fmt = (x, digits = 0) => (Number.isFinite(x) ? x.toFixed(digits) : '—');

/** One step through engine.attention, its output written into one reused array. */
function packageStep(engine) {
  const args = attentionArgs(decodeShape);
  return async () => engine.attention(args);
}

async function timeOnce(run) {
  const t0 = performance.now();
  await run();
  return performance.now() - t0;
}

/**
 * `rounds` rounds of one step and one run of each copy, after one untimed run of each; the
 * order alternates. Per round: the step's K/V bytes per µs over the fastest copy's bytes per µs.
 */
async function stepAgainstCopy(step, copies, rounds) {
  await warmUp(step, 5000);
  for (const copy of copies) copy.once();
  const steps = [];
  const copyRates = copies.map(() => []);
  const fractions = [];
  for (let i = 0; i < rounds; i++) {
    const copyFirst = i % 2 === 1;
    const rates = copyFirst ? copies.map((c) => c.bytes / (1000 * c.once())) : [];
    const ms = await timeOnce(step);
    if (!copyFirst) rates.push(...copies.map((c) => c.bytes / (1000 * c.once())));
    rates.forEach((r, c) => copyRates[c].push(r));
    steps.push(ms);
    fractions.push(kvBytes / (1000 * ms) / Math.max(...rates));
  }
  const usPerStep = 1000 * median(steps);
  const { median: fraction, q1, q3 } = quartiles(fractions);
  return {
    usPerStep,
    kvBytesPerUs: kvBytes / usPerStep,
    copyBytesPerUs: Object.fromEntries(copies.map((c, i) => [c.name, median(copyRates[i])])),
    fractionOfCopy: fraction,
    fractionQuartiles: [q1, q3],
    rounds,
  };
}

/** The decode table (printed through `log`); resolves to its record for variants.json. */
export async function runDecodeBench({ quick = false, log = console.log } = {}) {
  const threads = os.availableParallelism();
  const rounds = quick ? 5 : 21;
  const { H, Hkv, Tk, d } = decodeShape;
  const record = { ...decodeShape, kvBytes, clock: 'wall', hardwareThreads: threads, rows: [] };
  log(
    `  decode step Tq=1 Tk=${Tk} H=${H} Hkv=${Hkv} d=${d} causal, K/V ${fmt(kvBytes / 2 ** 20, 1)} MiB ` +
      `(wall clock, ${rounds} rounds of step and copy interleaved; fraction: median [quartiles] of the rounds):`,
  );
  const row = async (label, what, n, step, copies) => {
    const r = { label, what, threads: n, ...(await stepAgainstCopy(step, copies, rounds)) };
    r.met = r.fractionOfCopy >= 0.5;
    record.rows.push(r);
    const copyText = Object.entries(r.copyBytesPerUs)
      .map(([name, rate]) => `${name} ${fmt(rate)}`)
      .join(', ');
    log(
      `    ${label}, ${what}: ${fmt(r.usPerStep)} µs per step, ${fmt(r.kvBytesPerUs)} B/µs = ` +
        `${fmt(100 * r.fractionOfCopy)}% [${fmt(100 * r.fractionQuartiles[0])}, ${fmt(100 * r.fractionQuartiles[1])}] ` +
        `of ${n} thread${n > 1 ? 's' : ''} copying (B/µs: ${copyText}): ${r.met ? 'meets' : 'does not meet'} 50 %`,
    );
  };

  const oneThreadCopies = [copyTimer(), await parallelCopyTimer(1)];
  try {
    const engine = await loadAttnScope();
    await row(
      '1 thread, package',
      `single-thread build, ${engine.simdArch}; engine.attention copies K/V in`,
      1,
      packageStep(engine),
      oneThreadCopies,
    );
    if (await loadCoreProbe()) {
      const core = await createCoreDecode(decodeShape);
      await row(
        '1 thread, core alone',
        'core-probe, sse2; the cache already in wasm memory',
        1,
        core.run,
        oneThreadCopies,
      );
    }
  } finally {
    for (const c of oneThreadCopies) await c.close();
  }
  if (threads > 1) {
    const copies = [
      await parallelCopyTimer(threads),
      await parallelCopyTimer(threads, { shared: false }),
    ];
    try {
      const threaded = await loadAttnScope('auto', threads);
      await row(
        `${threads} threads, package`,
        `threaded build, ${threaded.simdArch}; engine.attention copies K/V in on the calling thread`,
        threads,
        packageStep(threaded),
        copies,
      );
      if (await loadCoreProbe(threads)) {
        const core = await createCoreDecode(decodeShape, threads);
        await row(
          `${threads} threads, core alone`,
          'core-probe-threads, sse2; the cache already in wasm memory',
          threads,
          core.run,
          copies,
        );
      }
    } finally {
      for (const c of copies) await c.close();
    }
  }
  const verdict = (r) =>
    `${r.label} against ${r.threads} copying: ${fmt(100 * r.fractionOfCopy)}% (${r.met ? 'met' : 'not met'})`;
  log(`    target ≥ 50 % of copy: ${record.rows.map(verdict).join('; ')}`);
  return record;
}
