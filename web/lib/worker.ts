// attnscope/worker for browsers and bundlers: the engine in a module worker.
import { AttnScopeError } from './errors.js';
import { createClient, type AttnScopeWorker, type WorkerCreateOptions } from './worker-protocol.js';

export type { AttnScopeWorker, WorkerCreateOptions, WorkerInfo } from './worker-protocol.js';
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
      post: (message) => worker.postMessage(message),
      listen(onMessage, onFailure) {
        worker.addEventListener('message', (e) => onMessage(e.data));
        worker.addEventListener('error', (e) => onFailure(new AttnScopeError(`worker failed: ${e.message}`)));
      },
      terminate: () => worker.terminate(),
    },
    options,
  );
}
