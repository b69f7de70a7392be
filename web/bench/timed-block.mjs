// One block of timed calls as the threads benchmarks take it: a quiet moment
// first (so each block starts as a call after an idle moment does), one
// untimed call, then the timed ones; the block's figure is their median.
import { setTimeout as sleep } from 'node:timers/promises';
import { quartiles } from './quartiles.mjs';

/** Median ms of `calls` timed runs of `run`, after `quietMs` of sleep and one untimed run. */
export async function timedBlock(run, { quietMs, calls }) {
  if (quietMs > 0) await sleep(quietMs);
  run();
  const times = [];
  for (let c = 0; c < calls; c++) {
    const t0 = performance.now();
    run();
    times.push(performance.now() - t0);
  }
  return quartiles(times).median;
}
