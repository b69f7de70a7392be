// What the "Modern attention" views share: the selected sequence's q, k and v as the
// engine computed them, and a hook that runs one more engine call (in the page's
// worker) whenever what it depends on changes, keeping only the newest answer.
import { useEffect, useState } from 'preact/hooks';
import type { RunResult } from '../../compute';
import { engineWorker } from '../../compute';

/** One sequence's projections, every head, trimmed to its real tokens: (H, T, d). */
export interface HeadTensors {
  H: number;
  T: number;
  dK: number;
  dV: number;
  q: Float32Array; // (H, T, dK)
  k: Float32Array; // (H, T, dK)
  v: Float32Array; // (H, T, dV)
  tokens: string[];
  scale: boolean | number; // the page's scaling, so these views score as the main one does
  total: number; // tokens in the sentence; T is at most kModernTokens of them
}

/** The modern views draw every cell as SVG and make several engine calls: the first 64 tokens. */
export const kModernTokens = 64;

function trimmed(data: Float32Array, b: number, H: number, Tall: number, T: number, d: number) {
  const out = new Float32Array(H * T * d);
  for (let h = 0; h < H; h++) {
    const from = (b * H + h) * Tall * d;
    out.set(data.subarray(from, from + T * d), h * T * d);
  }
  return out;
}

/** q, k, v of sequence b from the engine's trace of the page's run (padding dropped). */
export function headTensors(r: RunResult, b: number): HeadTensors {
  const { H, dK, dV } = r.model;
  const Tall = r.model.T;
  const total = Math.min(Tall, r.model.lengths[b] ?? Tall);
  const T = Math.min(total, kModernTokens);
  const t = r.attention.trace!;
  return {
    H,
    T,
    dK,
    dV,
    q: trimmed(t.q.data, b, H, Tall, T, dK),
    k: trimmed(t.k.data, b, H, Tall, T, dK),
    v: trimmed(t.v.data, b, H, Tall, T, dV),
    tokens: r.model.tokens[b].slice(0, T),
    scale: r.model.scale,
    total,
  };
}

const runIds = new WeakMap<RunResult, number>();
let runCount = 0;
/** A number naming one result of the page's run (for the keys of useEngine). */
export function runKey(r: RunResult): number {
  let id = runIds.get(r);
  if (id === undefined) runIds.set(r, (id = ++runCount));
  return id;
}

/** The (T, d) block of head h in an (H, T, d) array: a view. */
export function headBlock(data: Float32Array, h: number, T: number, d: number): Float32Array {
  return data.subarray(h * T * d, (h + 1) * T * d);
}

/** Largest |a − b| over two arrays of the same length (NaN if one holds a NaN). */
export function maxAbsDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let m = 0;
  for (let i = 0; i < a.length; i++) {
    const d = Math.abs(a[i] - b[i]);
    if (!(d <= m)) m = Number.isNaN(d) ? Number.NaN : d;
    if (Number.isNaN(m)) return m;
  }
  return m;
}

export type Engine = ReturnType<typeof engineWorker>;

export interface EngineAnswer<T> {
  value: T | null;
  error: string | null;
  fresh: boolean; // the value answers the current key
}

/**
 * Runs `call` on the page's engine whenever `key` changes; an answer that arrives
 * after a newer call started is dropped. The previous value stays shown meanwhile.
 */
export function useEngine<T>(key: string, call: (engine: Engine) => Promise<T>): EngineAnswer<T> {
  const [answer, setAnswer] = useState<{
    value: T | null;
    error: string | null;
    key: string | null;
  }>({ value: null, error: null, key: null });
  useEffect(() => {
    let current = true;
    call(engineWorker()).then(
      (value) => current && setAnswer({ value, error: null, key }),
      (e: unknown) =>
        current &&
        setAnswer({ value: null, error: e instanceof Error ? e.message : String(e), key }),
    );
    return () => {
      current = false;
    };
  }, [key]);
  const fresh = answer.key === key;
  return { value: answer.value, error: fresh ? answer.error : null, fresh };
}

/** What a view's root says in data-engine (the e2e tests wait for "ready"). */
export const readiness = (...answers: EngineAnswer<unknown>[]) =>
  answers.some((a) => a.error) ? 'error' : answers.every((a) => a.fresh) ? 'ready' : 'computing';

/** The value if its tensor has `shape` (a stale answer for other sizes is not drawn). */
export function fitting<T>(
  value: T | null,
  tensor: (v: T) => { shape: readonly number[] } | undefined,
  shape: number[],
): T | null {
  const t = value && tensor(value);
  return t && t.shape.length === shape.length && t.shape.every((n, i) => n === shape[i])
    ? value
    : null;
}
