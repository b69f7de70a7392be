// The module worker started by createAttnScopeWorker (browser flavour).
import { createAttnScope } from './index.js';
import { serve } from './worker-protocol.js';

interface WorkerScope {
  postMessage(message: unknown, transfer: ArrayBuffer[]): void;
  addEventListener(type: 'message', listener: (event: MessageEvent) => void): void;
}
const scope = globalThis as unknown as WorkerScope;

serve(
  {
    post: (message, transfer) => scope.postMessage(message, transfer),
    listen: (onMessage) => scope.addEventListener('message', (event) => onMessage(event.data)),
  },
  createAttnScope,
);
