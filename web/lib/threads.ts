// Which build computes on how many threads: the `threads` option of
// createAttnScope, checked, and whether the threaded build (pthreads on
// shared memory) can run in this context at all.
import { AttnScopeError } from './errors.js';

/** The largest thread count accepted (the core's kMaxThreads). */
export const kMaxThreads = 256;
/**
 * The most threads "auto" takes: each engine keeps its pool of workers for
 * its lifetime, so a process that makes many engines on a big machine would
 * otherwise hold hundreds of idle workers.
 */
export const kMaxAutoThreads = 8;
/** The threaded build's files, beside the loader. */
export const kThreadsWasmFileName = 'attnscope-threads.wasm';
export const kThreadsGlueFileName = 'attnscope-threads.mjs';
/**
 * The threaded build with relaxed SIMD and its own glue: the glue bakes in
 * addresses of the module's static data, which the two builds lay out
 * differently. The pthread worker script is the same.
 */
export const kThreadsRelaxedWasmFileName = 'attnscope-threads-relaxed.wasm';
export const kThreadsRelaxedGlueFileName = 'attnscope-threads-relaxed.mjs';
export const kThreadsWorkerFileName = 'attnscope-threads.worker.js';

const kIsolationHeaders =
  'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp';

function isNode(): boolean {
  return typeof process === 'object' && typeof process.versions?.node === 'string';
}

/**
 * Why the threaded build cannot run here, or "" when it can: it needs
 * SharedArrayBuffer, which browsers give only to cross-origin isolated pages
 * (served with the COOP and COEP headers), and workers to run its threads.
 */
export function threadsUnavailableReason(): string {
  if (isNode()) return '';
  if (typeof SharedArrayBuffer !== 'function' || globalThis.crossOriginIsolated !== true) {
    return `the page is not cross-origin isolated (it needs the headers ${kIsolationHeaders}), so it has no SharedArrayBuffer`;
  }
  if (typeof Worker !== 'function') return 'this context cannot start Web Workers';
  return '';
}

/** Hardware threads as the browser reports them (Node's entry passes its own count). */
export function browserHardwareThreads(): number {
  const n = typeof navigator === 'object' ? navigator.hardwareConcurrency : undefined;
  return typeof n === 'number' && n >= 1 ? Math.min(Math.floor(n), kMaxThreads) : 1;
}

/**
 * The thread count for the `threads` option: "auto" (or absent) gives every
 * hardware thread (at most kMaxAutoThreads) where the threaded build runs and `explicitWasm` is false,
 * else 1; a number must be an integer from 1 to kMaxThreads, and above 1 only
 * where the threaded build runs.
 */
export function resolveThreads(
  requested: unknown,
  hardware: number,
  explicitWasm: boolean,
): number {
  const unavailable = threadsUnavailableReason();
  if (requested === undefined || requested === 'auto') {
    return unavailable || explicitWasm ? 1 : Math.max(1, Math.min(hardware, kMaxAutoThreads));
  }
  if (typeof requested !== 'number' || !Number.isInteger(requested)) {
    throw new AttnScopeError(
      `createAttnScope: threads must be "auto" or an integer from 1 to ${kMaxThreads}, got ${typeof requested === 'number' ? requested : (JSON.stringify(requested) ?? typeof requested)}`,
    );
  }
  if (requested < 1 || requested > kMaxThreads) {
    throw new AttnScopeError(
      `createAttnScope: threads must be from 1 to ${kMaxThreads}, got ${requested}`,
    );
  }
  if (requested > 1 && unavailable) {
    throw new AttnScopeError(
      `createAttnScope: threads ${requested} needs the threaded build, which cannot run here: ${unavailable} (use threads: 1 or "auto")`,
    );
  }
  return requested;
}
