// attnscope/worker for Node: the engine in a worker_threads worker.
import { Worker } from 'node:worker_threads';

import { AttnScopeError } from './errors.js';
import { createClient, type AttnScopeWorker, type WorkerCreateOptions } from './worker-protocol.js';

export type { AttnScopeWorker, WorkerCreateOptions, WorkerInfo } from './worker-protocol.js';
export { AttnScopeError } from './errors.js';

/**
 * Starts a worker thread running the engine and returns a proxy whose methods
 * return Promises. Call `terminate()` when done (the thread keeps Node alive).
 */
export function createAttnScopeWorker(options: WorkerCreateOptions = {}): AttnScopeWorker {
  const worker = new Worker(new URL('./worker-node-main.js', import.meta.url));
  return createClient(
    {
      post: (message) => worker.postMessage(message),
      listen(onMessage, onFailure) {
        worker.on('message', onMessage);
        worker.on('error', (e) => onFailure(new AttnScopeError(`worker failed: ${e.message}`)));
        worker.on('exit', (code) => onFailure(new AttnScopeError(`worker exited with code ${code}`)));
      },
      terminate: () => void worker.terminate(),
    },
    options,
  );
}
