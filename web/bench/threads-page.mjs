// The threaded comparison's browser side: loads onnxruntime-web and attnscope
// by URL (a worker has no import map) and runs threads-run.mjs with both, on
// whichever thread imports it: the page's main thread, or a worker
// (threads-worker.mjs). threads-browser.mjs serves it.
import { runThreadsBench } from './threads-run.mjs';

/** Runs the comparison with `options` (threads-options.mjs), printing through `log`. */
export async function runInBrowser(options, log) {
  const ort = await import('/node_modules/onnxruntime-web/dist/ort.min.mjs');
  const { createAttnScope } = await import('/dist/browser.js');
  ort.env.wasm.numThreads = options.threads;
  ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
  ort.env.logLevel = 'error';
  const where =
    typeof document === 'undefined' ? 'in a dedicated worker' : "on the page's main thread";
  log(
    `attnscope threaded vs onnxruntime-web ${ort.env.versions?.web ?? ''} in ` +
      `${navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0]}, ${where}, ` +
      `${navigator.hardwareConcurrency} hardware threads`,
  );
  return runThreadsBench({ ort, createAttnScope, ...options, log });
}
