// Loads the core-only probe (core-probe.cpp, built by scripts/bench.sh into
// build/bench-probe/) and wraps it in the runner interface of the other
// runtimes. Resolves to null when it has not been built.
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export const probeDir = resolve(
  process.env.ATTNSCOPE_PROBE ?? new URL('../../build/bench-probe', import.meta.url).pathname,
);

let modulePromise = null;
export function loadCoreProbe() {
  modulePromise ??= (async () => {
    const glue = resolve(probeDir, 'core-probe.mjs');
    if (!existsSync(glue)) return null;
    const { default: create } = await import(pathToFileURL(glue).href);
    return create({ wasmBinary: await readFile(resolve(probeDir, 'core-probe.wasm')) });
  })();
  return modulePromise;
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

/** A decode step (Tq = 1) of H query heads against Hkv heads of Tk cached keys; runs as attention. */
export async function createCoreDecode({ H, Hkv, Tk, d }) {
  const m = await loadCoreProbe();
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
