// The engine's version line, once the worker has said it, with the threads it
// computes on; on one thread because the host sends no cross-origin isolation
// headers, the line says so (the threaded build needs SharedArrayBuffer).
import { signal } from '@preact/signals';
import { engineVersion, engineWorker } from './compute';
import { byId } from './dom';

export const engineInfo = signal('');

function threadsNote(threads: number): string {
  if (threads > 1) return ` on ${threads} threads`;
  if (globalThis.crossOriginIsolated !== true) {
    return ' on one thread: this host does not send the Cross-Origin-Opener-Policy and Cross-Origin-Embedder-Policy headers that shared memory (and so the threaded build) needs';
  }
  return ' on one thread';
}

export function showEngineInfo(): void {
  Promise.all([engineVersion(), engineWorker().ready])
    .then(([v, ready]) => {
      engineInfo.value = v;
      byId('engine-info').textContent =
        `Engine: attnscope ${v} in a Web Worker${threadsNote(ready.threads)}.`;
    })
    .catch(() => undefined);
}
