// The Node side of one pthread worker of the threaded build: a
// worker_threads worker dressed as the Web Worker that the Emscripten
// glue's worker script (attnscope-threads.worker.js) expects, with `self`,
// `postMessage` and `onmessage`. Messages that arrive while that script is
// still being imported are held and delivered in order once it listens.
import { parentPort, workerData } from 'node:worker_threads';

type Handler = ((event: { data: unknown }) => void) | null | undefined;
const scope = globalThis as unknown as {
  self: unknown;
  location: { href: string };
  postMessage: (message: unknown, transfer?: readonly Transferable[]) => void;
  onmessage: Handler;
};
const port = parentPort!;
const { url } = workerData as { url: string };
scope.self = globalThis;
scope.location = { href: url };
scope.postMessage = (message, transfer) => port.postMessage(message, transfer as never);
const early: unknown[] = [];
port.on('message', (data: unknown) =>
  scope.onmessage ? scope.onmessage({ data }) : early.push(data),
);
await import(url);
for (const data of early.splice(0)) scope.onmessage?.({ data });
