// attnscope's fast path (trace: false: tiled online-softmax kernel, no T×T
// matrix) through the package's public API, loaded from the built dist/.
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';
import { existsSync } from 'node:fs';

/** dist/ of the repository, or ATTNSCOPE_DIST to benchmark another build. */
export const distDir = resolve(
  process.env.ATTNSCOPE_DIST ?? new URL('../../dist', import.meta.url).pathname,
);

const enginePromises = new Map();
/**
 * Resolves to the engine, or to null when dist/ has not been built. `simd`
 * picks the build as createAttnScope's option does: by default the relaxed-SIMD
 * one where Node runs relaxed SIMD (scripts/bench.sh passes Node 20 its flag).
 * `threads` above 1 loads the threaded build (gpt2-bench.mjs --threads).
 */
export function loadAttnScope(simd = 'auto', threads = 1) {
  const key = `${simd}/${threads}`;
  if (!enginePromises.has(key)) {
    enginePromises.set(
      key,
      (async () => {
        const entry = resolve(distDir, 'node.js');
        if (!existsSync(entry)) return null;
        const { createAttnScope } = await import(pathToFileURL(entry).href);
        // One thread by default: every table this engine serves compares
        // single-thread runtimes (threads-bench.mjs times the threaded build on its own).
        return createAttnScope(threads > 1 ? { threads } : { simd, threads: 1 });
      })(),
    );
  }
  return enginePromises.get(key);
}

/**
 * engine.attention on (1, H, T, d) inputs. By default the output goes into one
 * array reused across runs (`out`), as the TF.js runner reuses its own; with
 * `freshOutput`, each run returns a new array (the package's default).
 */
export async function createAttnScopeAttention(
  { q, k, v, H, T, d, causal },
  { freshOutput = false, simd = 'auto' } = {},
) {
  const engine = await loadAttnScope(simd);
  const args = {
    q,
    k,
    v,
    shape: [1, H, T, d],
    scale: true,
    mask: causal ? 'causal' : 'none',
    trace: false,
  };
  if (!freshOutput) args.out = new Float32Array(H * T * d);
  let last = null;
  return {
    async run() {
      last = engine.attention(args).output.data;
    },
    output: () => last,
    async release() {},
  };
}

/**
 * y = x·W for x (rows, inDim), W (inDim, outDim): attnscope's matmul through
 * engine.linear, writing into one output array reused across runs, as
 * attention does: a fresh output per call costs mostly its pages' faults
 * (measured: docs/performance/journal.md, "What is measured").
 */
export async function createAttnScopeLinear(
  { x, weight, rows, inDim, outDim },
  { simd = 'auto' } = {},
) {
  const engine = await loadAttnScope(simd);
  const args = { x, shape: [rows, inDim], weight, outDim, out: new Float32Array(rows * outDim) };
  let last = null;
  return {
    async run() {
      last = engine.linear(args).data;
    },
    output: () => last,
    async release() {},
  };
}
