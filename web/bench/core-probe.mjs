// Loads the core-only probe (core-probe.cpp, built by scripts/bench.sh into
// build/bench-probe/) and wraps it in the runner interface of the other
// runtimes. Resolves to null when it has not been built. With threads above 1
// it loads the threaded twin (core-probe-threads), whose pthread workers start
// as the package's do in Node (dist/node-web-worker.js).
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

import { distDir } from './attnscope-runner.mjs';

export const probeDir = resolve(
  process.env.ATTNSCOPE_PROBE ?? new URL('../../build/bench-probe', import.meta.url).pathname,
);

const modulePromises = new Map();
export function loadCoreProbe(threads = 1) {
  if (!modulePromises.has(threads)) modulePromises.set(threads, instantiate(threads));
  return modulePromises.get(threads);
}

async function instantiate(threads) {
  const name = threads > 1 ? 'core-probe-threads' : 'core-probe';
  const glue = resolve(probeDir, `${name}.mjs`);
  const nodeWorker = resolve(distDir, 'node-web-worker.js');
  if (!existsSync(glue) || (threads > 1 && !existsSync(nodeWorker))) return null;
  const { default: create } = await import(pathToFileURL(glue).href);
  const wasmBinary = await readFile(resolve(probeDir, `${name}.wasm`));
  if (threads <= 1) return create({ wasmBinary });
  const { NodeWebWorker } = await import(pathToFileURL(nodeWorker).href);
  const workerUrl = pathToFileURL(resolve(probeDir, `${name}.worker.js`)).href;
  const m = await create({
    wasmBinary,
    // Quiet: the glue warns that the main thread blocks, which the probe's caller does on purpose.
    printErr: () => {},
    attnscopeWorkers: threads,
    attnscopeWorker: NodeWebWorker,
    mainScriptUrlOrBlob: pathToFileURL(glue).href,
    locateFile: (file) => (file.endsWith('.worker.js') ? workerUrl : file),
  });
  check(m._probe_set_threads(threads), `starting ${threads} threads`);
  return m;
}

const check = (status, what) => {
  if (status !== 0) throw new Error(`core probe: ${what} failed`);
};

/** attention (fast path) on the probe's own (1, H, T, d) inputs; no output to validate. */
export async function createCoreAttention({ H, T, d, causal }) {
  const m = await loadCoreProbe();
  m._probe_prepare_attention(H, T, d, causal ? 1 : 0);
  return {
    run: async () => check(m._probe_run_attention(), 'attention'),
    output: () => null,
    release: async () => {},
  };
}

/**
 * A decode step (Tq = 1) of H query heads against Hkv heads of Tk cached keys; runs as
 * attention, on `threads` threads (the threaded probe above 1).
 */
export async function createCoreDecode({ H, Hkv, Tk, d }, threads = 1) {
  const m = await loadCoreProbe(threads);
  m._probe_prepare_decode(H, Hkv, Tk, d);
  return {
    run: async () => check(m._probe_run_attention(), 'decode step'),
    output: () => null,
    release: async () => {},
  };
}

/** linear x (rows, in) · W (in, out) on the probe's own inputs. */
export async function createCoreLinear({ rows, inDim, outDim }) {
  const m = await loadCoreProbe();
  m._probe_prepare_linear(rows, inDim, outDim);
  return {
    run: async () => check(m._probe_run_linear(), 'linear'),
    output: () => null,
    release: async () => {},
  };
}

/** The matmul kernel alone (what linear runs, without checks or allocation). */
export async function createCoreMatmulKernel({ rows, inDim, outDim }) {
  const m = await loadCoreProbe();
  m._probe_prepare_matmul(rows, inDim, outDim);
  return {
    run: async () => check(m._probe_run_matmul(), 'matmul'),
    output: () => null,
    release: async () => {},
  };
}

/** The flash kernel's Q·Kᵀ and P·V products for (1, H, T, d), without the softmax. */
export async function createCoreProducts({ H, T, d }) {
  const m = await loadCoreProbe();
  m._probe_prepare_products(H, T, d);
  return {
    run: async () => check(m._probe_run_products(), 'products'),
    output: () => null,
    release: async () => {},
  };
}
