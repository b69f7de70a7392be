// attnscope/worker for browsers and bundlers: the engine in a module worker.
import { AttnScopeError } from './errors.js';
import { createClient, type AttnScopeWorker, type WorkerCreateOptions } from './worker-protocol.js';
import { createPool, type AttnScopePool, type PoolCreateOptions } from './worker-pool.js';

export type { AttnScopeWorker, WorkerCreateOptions, WorkerInfo } from './worker-protocol.js';
export type { AttnScopePool, PoolCreateOptions, PoolInfo } from './worker-pool.js';
export type { WorkerModel, WorkerTrainer } from './worker-models.js';
export { AttnScopeError } from './errors.js';

/**
 * Starts a module worker running the engine and returns a proxy whose methods
 * return Promises. Call `terminate()` when done.
 *
 * @example
 * const engine = createAttnScopeWorker();
 * const r = await engine.selfAttention({ x, shape: [T, C], wq, wk, wv });
 */
export function createAttnScopeWorker(options: WorkerCreateOptions = {}): AttnScopeWorker {
  // The literal new URL(..., import.meta.url) lets bundlers find and emit the worker.
  const worker = new Worker(new URL('./worker-main.js', import.meta.url), { type: 'module' });
  return createClient(
    {
      post: (message, transfer) => worker.postMessage(message, transfer),
      listen(onMessage, onFailure) {
        worker.addEventListener('message', (e) => onMessage(e.data));
        worker.addEventListener('error', (e) =>
          onFailure(new AttnScopeError(`worker failed: ${e.message}`)),
        );
      },
      terminate: () => worker.terminate(),
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
    globalThis.navigator?.hardwareConcurrency,
  );
}
