// A pool of engine workers, the package's multi-core flavour. Each call goes
// to the worker with the fewest calls in flight; a large `attention` call is
// split by batch or by head across all of them (attention-split.ts).
//
// Where the threaded build runs (Node, cross-origin isolated pages), the pool
// is instead one worker whose engine computes on `workers` threads over
// shared memory: no copies, and calls of any size use every thread.
//
// Otherwise the workers share nothing: each part's inputs are copied to its worker and
// the results come back by transfer. That costs a copy of the inputs, small
// next to the work of a call large enough to split (docs/performance/journal.md, "Worker pool"),
// and in exchange the pool needs no SharedArrayBuffer, hence no cross-origin
// isolation, and runs wherever `attnscope/worker` runs (browsers, bundlers,
// Node).
import { mergeAttention, splitAttention } from './attention-split.js';
import { AttnScopeError } from './errors.js';
import { threadsUnavailableReason } from './threads.js';
import { keepingAttentionOutput, keepingLinearOutput } from './output-buffer.js';
import {
  infoOf,
  type AttnScopeWorker,
  type WorkerCreateOptions,
  type WorkerInfo,
} from './worker-protocol.js';
import type { AttentionArgs, AttentionResult, MemoryUsage } from './types.js';

/** Options of `createAttnScopePool`. */
export interface PoolCreateOptions extends WorkerCreateOptions {
  /** Number of workers, 1 to 64; default: the machine's hardware threads, at most 8. */
  workers?: number;
  /**
   * Smallest `attention` call that is split across workers, in FLOPs
   * (2·B·H·T²·(d + d_v), half that with a causal mask); default 1e9: at
   * H = 8, d = 64, calls from T = 700 without a mask and T = 990 causal.
   * Smaller splits gain less and less reliably: at T = 512 the pool was
   * 0.9–1.7× one thread from run to run (web/bench/pool-bench.mjs), as the
   * copies and fresh buffers weigh as much as half the work.
   */
  minSplitFlops?: number;
}

/** What the pool reports once every worker has loaded the engine. */
export interface PoolInfo extends WorkerInfo {
  /** Number of workers (1 when that worker runs the threaded build on `threads` threads). */
  workers: number;
}

/**
 * Engines in several workers behind the {@link AttnScopeWorker} methods. A
 * call that runs whole moves the buffers of its `transfer` list like a single
 * worker does; a split `attention` call only reads the caller's buffers (each
 * part gets fresh slices), so they stay intact.
 */
export interface AttnScopePool extends Omit<
  AttnScopeWorker,
  'ready' | 'memoryUsage' | 'loadModel' | 'loadModelFromBlob' | 'createModel'
> {
  /** Resolves once every worker has loaded the wasm; rejects with AttnScopeError if one cannot. */
  readonly ready: Promise<PoolInfo>;
  /** Number of workers asked for: that many single-thread workers, or the threads of one threaded engine. */
  readonly size: number;
  /** Memory of each worker's engine, in worker order. */
  memoryUsage(): Promise<MemoryUsage[]>;
}

export const kDefaultMinSplitFlops = 1e9;
const kMaxDefaultWorkers = 8;
const kMaxWorkers = 64;

/** The default pool size for a machine with `hardwareThreads` threads. */
export function defaultPoolSize(hardwareThreads: number | undefined): number {
  return Math.max(1, Math.min(kMaxDefaultWorkers, Math.floor(hardwareThreads ?? 1) || 1));
}

/** Whether a pool with these options runs as one threaded engine (`threads: 1` says no). */
export function poolIsThreaded(options: PoolCreateOptions, size: number): boolean {
  return (
    size > 1 &&
    options.threads !== 1 &&
    threadsUnavailableReason() === '' &&
    options.wasmBinary === undefined &&
    options.wasmUrl === undefined
  );
}

/**
 * Builds a pool of `options.workers` workers made by `start(threads)`: one
 * worker of that many threads where the threaded build runs, else that many
 * single-thread workers.
 */
export function createPool(
  start: (threads: number) => AttnScopeWorker,
  options: PoolCreateOptions,
  hardwareThreads: number | undefined,
): AttnScopePool {
  const size = options.workers ?? defaultPoolSize(hardwareThreads);
  if (!Number.isInteger(size) || size < 1 || size > kMaxWorkers) {
    throw new AttnScopeError(
      `createAttnScopePool: workers must be an integer from 1 to ${kMaxWorkers}, got ${String(options.workers)}`,
    );
  }
  const minSplitFlops = options.minSplitFlops ?? kDefaultMinSplitFlops;
  if (typeof minSplitFlops !== 'number' || !(minSplitFlops >= 0)) {
    throw new AttnScopeError(
      `createAttnScopePool: minSplitFlops must be a non-negative number, got ${String(options.minSplitFlops)}`,
    );
  }

  const threaded = poolIsThreaded(options, size);
  const workers = threaded ? [start(size)] : Array.from({ length: size }, () => start(1));
  const inFlight = workers.map(() => 0);
  const ready = Promise.all(workers.map((w) => w.ready)).then(([first]): PoolInfo => ({
    ...first!,
    workers: workers.length,
  }));
  ready.catch(() => undefined);

  /** Runs `work` on worker `index`, counting it as busy meanwhile. */
  async function on<T>(index: number, work: (w: AttnScopeWorker) => Promise<T>): Promise<T> {
    inFlight[index]! += 1;
    try {
      return await work(workers[index]!);
    } finally {
      inFlight[index]! -= 1;
    }
  }
  const leastBusy = (): number => inFlight.indexOf(Math.min(...inFlight));
  const onLeastBusy = <T>(work: (w: AttnScopeWorker) => Promise<T>): Promise<T> =>
    on(leastBusy(), work);

  async function attentionOnWorkers(
    args: AttentionArgs,
    transfer?: ArrayBuffer[],
  ): Promise<AttentionResult> {
    const split = workers.length > 1 ? splitAttention(args, size, minSplitFlops) : undefined;
    if (!split) return onLeastBusy((w) => w.attention(args, transfer));
    // Parts go to the least busy workers first, one each.
    const order = inFlight.map((busy, index) => ({ busy, index })).sort((a, b) => a.busy - b.busy);
    try {
      // Each part's q, k and v are fresh slices: moving them spares the clone,
      // whose fresh pages alone cost milliseconds.
      const results = await Promise.all(
        split.parts.map((part, i) =>
          on(order[i]!.index, (w) => w.attention(part.args, part.transfer)),
        ),
      );
      return mergeAttention(results, split.axis);
    } catch {
      // A part failed: run the call whole so the error (or result) is exactly
      // the one a single engine gives, with the caller's shapes in it.
      return onLeastBusy((w) => w.attention(args, transfer));
    }
  }

  return {
    ready,
    size,
    ...infoOf(ready),
    selfAttention: (args, transfer) => onLeastBusy((w) => w.selfAttention(args, transfer)),
    attention: (args, transfer) =>
      keepingAttentionOutput(args, (rest) => attentionOnWorkers(rest, transfer)),
    positionalEncoding: (args, transfer) =>
      onLeastBusy((w) => w.positionalEncoding(args, transfer)),
    linear: (args, transfer) =>
      keepingLinearOutput(args, (rest) => onLeastBusy((w) => w.linear(rest, transfer))),
    layerNorm: (args, transfer) => onLeastBusy((w) => w.layerNorm(args, transfer)),
    feedForward: (args, transfer) => onLeastBusy((w) => w.feedForward(args, transfer)),
    residualAdd: (args, transfer) => onLeastBusy((w) => w.residualAdd(args, transfer)),
    transformerBlock: (args, transfer) => onLeastBusy((w) => w.transformerBlock(args, transfer)),
    rmsNorm: (args, transfer) => onLeastBusy((w) => w.rmsNorm(args, transfer)),
    swiglu: (args, transfer) => onLeastBusy((w) => w.swiglu(args, transfer)),
    llamaBlock: (args, transfer) => onLeastBusy((w) => w.llamaBlock(args, transfer)),
    memoryUsage: () => Promise.all(workers.map((w) => w.memoryUsage())),
    terminate: () => workers.forEach((w) => w.terminate()),
  };
}
