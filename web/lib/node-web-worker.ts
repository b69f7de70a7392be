// A Web Worker for Node (which has none), enough for the Emscripten pthread
// glue (passed as its attnscopeWorker option, see scripts/build.sh): a
// worker_threads worker running node-pthread-worker.js, which loads
// the worker script at `url`. Once the worker reports its module loaded it
// stops holding the process open, as idle pthreads should.
import { Worker as NodeWorker } from 'node:worker_threads';

export class NodeWebWorker {
  onmessage: ((event: { data: unknown }) => void) | null = null;
  onerror: ((error: unknown) => void) | null = null;
  readonly #worker: NodeWorker;

  constructor(url: string | URL) {
    this.#worker = new NodeWorker(new URL('./node-pthread-worker.js', import.meta.url), {
      workerData: { url: String(url) },
    });
    this.#worker.on('message', (data: { cmd?: string } | null) => {
      if (data?.cmd === 'loaded') this.#worker.unref();
      this.onmessage?.({ data });
    });
    this.#worker.on('error', (e) => this.onerror?.(e));
  }

  postMessage(message: unknown, transfer?: readonly Transferable[]): void {
    this.#worker.postMessage(message, transfer as never);
  }

  terminate(): void {
    void this.#worker.terminate();
  }
}
