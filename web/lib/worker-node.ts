// attnscope/worker for Node: the engine in a worker_threads worker.
import os from 'node:os';
import { Worker } from 'node:worker_threads';

import { AttnScopeError } from './errors.js';
import { createClient, type AttnScopeWorker, type WorkerCreateOptions } from './worker-protocol.js';
import { createPool, type AttnScopePool, type PoolCreateOptions } from './worker-pool.js';

export type { AttnScopeWorker, WorkerCreateOptions, WorkerInfo } from './worker-protocol.js';
export type { AttnScopePool, PoolCreateOptions, PoolInfo } from './worker-pool.js';
export type { WorkerModel, WorkerTrainer } from './worker-models.js';
export { AttnScopeError } from './errors.js';

/**
 * Starts a worker thread running the engine and returns a proxy whose methods
 * return Promises. Call `terminate()` when done (the thread keeps Node alive).
 */
export function createAttnScopeWorker(options: WorkerCreateOptions = {}): AttnScopeWorker {
  const worker = new Worker(new URL('./worker-node-main.js', import.meta.url));
  return createClient(
    {
      post: (message, transfer) => worker.postMessage(message, transfer),
      listen(onMessage, onFailure) {
        worker.on('message', onMessage);
        worker.on('error', (e) => onFailure(new AttnScopeError(`worker failed: ${e.message}`)));
        worker.on('exit', (code) =>
          onFailure(new AttnScopeError(`worker exited with code ${code}`)),
        );
      },
      terminate: () => void worker.terminate(),
    },
    options,
  );
}

/**
 * Starts `options.workers` engine workers (default: one per hardware thread,
 * at most 8). Calls go to the least busy worker; a large `attention` call is
 * split by batch or head across all of them, with the same result, bit for bit,
 * as one engine. Call `terminate()` when done.
 *
 * @example
 * const pool = createAttnScopePool();
 * const r = await pool.attention({ q, k, v, shape: [H, T, d], trace: false });
 */
export function createAttnScopePool(options: PoolCreateOptions = {}): AttnScopePool {
  return createPool(
    (threads) => createAttnScopeWorker({ ...options, threads }),
    options,
    hardwareThreads(),
  );
}

// os.availableParallelism arrived in Node 18.14; older Nodes count CPUs.
const hardwareThreads = (): number => os.availableParallelism?.() ?? os.cpus().length;
