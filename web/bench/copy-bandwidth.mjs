// The machine's memory copy bandwidth as WebAssembly sees it: TypedArray.set
// (a memmove in V8) within a WebAssembly.Memory, on the calling thread, or on
// several worker_threads at once, each copying within its own part of the
// memory. The decode step's K/V read rate is compared with these
// (decode-bench.mjs): one thread against one thread copying, N threads
// against N threads copying together.
import { Worker } from 'node:worker_threads';

/** Bytes copied per thread: far above every cache, as the decode step's 32 MiB of K/V are. */
export const kCopyBytes = 64 * 2 ** 20;

/**
 * A copy of kCopyBytes within one (unshared) WebAssembly.Memory on this thread:
 * `once()` copies and returns its wall-clock ms; `bytes` is what one copy moves.
 */
export function copyTimer() {
  const memory = new WebAssembly.Memory({ initial: (2 * kCopyBytes) / 65536 });
  const from = new Float32Array(memory.buffer, 0, kCopyBytes / 4).fill(1);
  const to = new Float32Array(memory.buffer, kCopyBytes, kCopyBytes / 4);
  return {
    name: 'this thread, own memory',
    bytes: kCopyBytes,
    once() {
      const t0 = performance.now();
      to.set(from);
      return performance.now() - t0;
    },
    close: async () => {},
  };
}

/**
 * `threads` worker_threads copying kCopyBytes each at once: `once()` starts them together
 * and returns the wall-clock ms from the start signal to the last one's end (the signal's
 * wake-up, tens of µs, counts against the copy); `bytes` is what they move together.
 * `shared`: each copies within its own part of one shared WebAssembly.Memory, as the
 * threaded build's threads share theirs; otherwise each within a memory of its own.
 * `close()` ends the workers.
 */
export async function parallelCopyTimer(threads, { shared = true } = {}) {
  // control[0]: the round (the workers copy when it changes; −1 ends them);
  // control[1]: how many workers have finished the round.
  const control = new Int32Array(new SharedArrayBuffer(8));
  const pages = (2 * threads * kCopyBytes) / 65536;
  const memory = shared
    ? new WebAssembly.Memory({ initial: pages, maximum: pages, shared: true })
    : null;
  const workers = [];
  for (let i = 0; i < threads; i++) {
    const worker = new Worker(new URL('./copy-bandwidth-worker.mjs', import.meta.url), {
      workerData: { control, memory, offset: 2 * i * kCopyBytes, bytes: kCopyBytes, threads },
    });
    workers.push(worker);
    await new Promise((ready, fail) => {
      worker.once('message', ready);
      worker.once('error', fail);
    });
  }
  let round = 0;
  return {
    name: `${threads} worker${threads > 1 ? 's' : ''}, ${shared ? 'one shared memory' : 'a memory each'}`,
    bytes: threads * kCopyBytes,
    once() {
      Atomics.store(control, 1, 0);
      const t0 = performance.now();
      Atomics.store(control, 0, ++round);
      Atomics.notify(control, 0);
      for (let done; (done = Atomics.load(control, 1)) < threads;) {
        Atomics.wait(control, 1, done);
      }
      return performance.now() - t0;
    },
    async close() {
      Atomics.store(control, 0, -1);
      Atomics.notify(control, 0);
      await Promise.all(workers.map((w) => new Promise((done) => w.once('exit', done))));
    },
  };
}
