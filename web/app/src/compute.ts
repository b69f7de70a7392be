// Runs the model through the engine in a Web Worker (attnscope/worker), so the page
// never blocks. Every number shown by the views comes from the result built here.
import type { SelfAttentionResult, TensorOut, TransformerBlockResult } from 'attnscope';
import { createAttnScopeWorker } from 'attnscope/worker';
import type { Gpt2Run } from './gpt2/run';
import type { Model } from './model';
import { sliceOf } from './tensor';

export interface RunResult {
  model: Model;
  positional: TensorOut | null; // (T, C) sinusoidal encoding, when enabled
  x: TensorOut; // (B, T, C): embeddings (+ positional encoding), the input of attention
  attention: SelfAttentionResult; // with trace
  block: TransformerBlockResult | null;
  millis: number; // the engine's computation
  startupMillis: number; // the first run only: loading and compiling the engine, before computing
  gpt2?: Gpt2Run; // with the visitor's GPT-2: the forward pass; `model` is then the selected layer's attention
}

/** Called as each engine call starts: `done` calls of `total` are finished, `label` is starting. */
export type Progress = (done: number, total: number, label: string) => void;

type Worker = ReturnType<typeof createAttnScopeWorker>;
// The start-up time is counted from the worker's creation: the engine line or a view may
// create it before the first run, and that run must still report the whole load and compile.
let engine: { worker: Worker; startupMillis: Promise<number> } | null = null;

function startEngine(): NonNullable<typeof engine> {
  if (!engine) {
    const t0 = performance.now();
    const worker = createAttnScopeWorker();
    const startupMillis = worker.ready.then(() => performance.now() - t0);
    startupMillis.catch(() => undefined); // a failed start is reported by the run that awaits it
    engine = { worker, startupMillis };
  }
  return engine;
}

/** The engine's worker, started on first use. Synchronous, so that a run posts its first call at once. */
export function engineWorker(): Worker {
  return startEngine().worker;
}

/** "0.1.0 (SIMD: sse2)": the engine's version and the instruction set of its kernels. */
export async function engineVersion(): Promise<string> {
  const w = engineWorker();
  const info = w as unknown as { version?: unknown; simdArch?: unknown };
  const version = String(await Promise.resolve(info.version ?? ''));
  const arch = String(await Promise.resolve(info.simdArch ?? ''));
  return arch ? `${version} (SIMD: ${arch})` : version;
}

// The encoding depends on the length and width only: a token edit reuses it.
let lastEncoding: { T: number; C: number; pe: Promise<TensorOut> } | null = null;
function positionalEncoding(worker: Worker, T: number, C: number): Promise<TensorOut> {
  if (lastEncoding?.T !== T || lastEncoding.C !== C) {
    const pe = worker.positionalEncoding({ length: T, dim: C });
    pe.catch(() => {
      if (lastEncoding?.pe === pe) lastEncoding = null; // a failed call is not kept
    });
    lastEncoding = { T, C, pe };
  }
  return lastEncoding.pe;
}

let started = false;
// The engine's load and compile time, until a run that carries it has been shown.
let unreportedStartupMillis = 0;

/** The page has shown the engine's start-up time: later runs report none. */
export function startupReported(): void {
  unreportedStartupMillis = 0;
}

export async function runModel(
  model: Model,
  positional: boolean,
  block: boolean,
  progress: Progress,
): Promise<RunResult> {
  const { worker, startupMillis } = startEngine();
  // The first run waits for the engine to load and compile: that is not computing.
  // Whichever run is shown first reports it, even when the run that waited was superseded.
  if (!started) {
    const millis = await startupMillis;
    if (!started) unreportedStartupMillis = millis;
    started = true;
  }
  const start = performance.now();
  const { B, T, C, H } = model;
  const shape = [B, T, C];
  const total = (positional ? 2 : 0) + 1;
  let done = 0;
  let pe: TensorOut | null = null;
  let x: TensorOut = { data: model.embeddings.slice(), shape };
  if (positional) {
    progress(done, total, 'positional encoding');
    pe = await positionalEncoding(worker, T, C);
    progress(++done, total, 'adding position to the embeddings');
    const tiled = new Float32Array(B * T * C);
    for (let b = 0; b < B; b++) sliceOf({ data: tiled, shape }, b).data.set(pe.data); // same encoding for every sequence
    x = await worker.residualAdd({ a: model.embeddings.slice(), b: tiled, shape });
    done++;
  }
  const w = model.weights;
  progress(done, total, block ? 'transformer block' : 'self-attention');
  let attention: SelfAttentionResult;
  let blockResult: TransformerBlockResult | null = null;
  if (block) {
    blockResult = await worker.transformerBlock({
      x: x.data.slice(),
      shape,
      attention: {
        wq: w.wq.data.slice(),
        wk: w.wk.data.slice(),
        wv: w.wv.data.slice(),
        wo: w.wo.data.slice(),
        heads: H,
      },
      ff1: { weight: w.w1.data.slice() },
      ff2: { weight: w.w2.data.slice() },
      hidden: model.hidden,
      activation: model.activation,
      scale: model.scale,
      mask: model.maskSpec,
      trace: true,
    });
    attention = blockResult.attention;
  } else {
    attention = await worker.selfAttention({
      x: x.data.slice(),
      shape,
      wq: w.wq.data.slice(),
      wk: w.wk.data.slice(),
      wv: w.wv.data.slice(),
      heads: H,
      scale: model.scale,
      mask: model.maskSpec,
      trace: true,
    });
  }
  progress(total, total, 'done');
  return {
    model,
    positional: pe,
    x,
    attention,
    block: blockResult,
    millis: performance.now() - start,
    startupMillis: unreportedStartupMillis,
  };
}
