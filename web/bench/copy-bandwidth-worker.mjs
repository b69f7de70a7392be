// One thread of parallelCopyBandwidth (copy-bandwidth.mjs): copies `bytes` within its part of
// the shared memory it is given (or of a memory of its own) each time the round in control[0]
// changes, then counts itself done in control[1]; a round of −1 ends it.
import { parentPort, workerData } from 'node:worker_threads';

const { control, memory, offset, bytes, threads } = workerData;
const own = memory ?? new WebAssembly.Memory({ initial: (2 * bytes) / 65536 });
const base = memory ? offset : 0;
const from = new Float32Array(own.buffer, base, bytes / 4).fill(1);
const to = new Float32Array(own.buffer, base + bytes, bytes / 4).fill(0);
parentPort.postMessage('ready');

for (let seen = 0; ;) {
  Atomics.wait(control, 0, seen);
  const round = Atomics.load(control, 0);
  if (round < 0) break;
  if (round === seen) continue;
  seen = round;
  to.set(from);
  if (Atomics.add(control, 1, 1) + 1 === threads) Atomics.notify(control, 1);
}
