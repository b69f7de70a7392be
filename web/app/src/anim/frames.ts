// What a stage shows at time t of its build-up, for the focused query row i: a pure
// function of (result, stage, sequence, head, query, t), so it can be played,
// scrubbed or shown step-wise. At t = 1 every value is the engine's own; before,
// the row being built shows partial sums of the engine's own terms (products
// q_i,d·k_j,d for a score, weights × values for an output) and not-yet-computed
// cells are blank.
import type { RunResult } from '../compute';
import { sliceOf } from '../tensor';
import type { MatrixView } from '../views/matrix';

export interface Frame {
  m: MatrixView;
  column: number | null; // the key column being worked on, lit up
}

/** The matrix `m` of stage `stageId` at time t, for query row `query`. */
export function frameOf(
  r: RunResult,
  stageId: string,
  m: MatrixView,
  b: number,
  head: number,
  query: number,
  t: number,
): Frame {
  if (t >= 1 || query >= m.rows) return { m, column: null };
  const tr = r.attention.trace!;
  const T = r.model.T;
  if (stageId === 'scores' && m.id === 'scores') {
    // Key j* gets its products added one by one; keys before it are done, after it blank.
    const q = sliceOf(tr.q, b, head).row(query);
    const k = sliceOf(tr.k, b, head);
    const pos = t * T;
    const key = Math.min(T - 1, Math.floor(pos));
    const terms = Math.floor((pos - key) * q.length) + 1;
    let partial = 0;
    for (let d = 0; d < terms && d < q.length; d++) partial += q[d] * k.row(key)[d];
    return {
      m: withRow(m, query, (j) =>
        j < key
          ? m.get(query, j)
          : j === key
            ? terms >= q.length
              ? m.get(query, j)
              : partial
            : Number.NaN,
      ),
      column: key,
    };
  }
  if (stageId === 'headOutputs' && m.id === 'headOutputs') {
    // The output row as the weighted values are added, key by key.
    const w = sliceOf(tr.weights, b, head).row(query);
    const v = sliceOf(tr.v, b, head);
    const keys = Math.min(T, Math.floor(t * (T + 1)));
    return {
      m: withRow(m, query, (d) => {
        let s = 0;
        for (let j = 0; j < keys; j++) s += w[j] * v.row(j)[d];
        return keys === 0 ? Number.NaN : s;
      }),
      column: null,
    };
  }
  if (stageId === 'qkv' && (m.id === 'q' || m.id === 'k' || m.id === 'v')) {
    // Row by row: token i's x times the W columns gives its q, k and v.
    const rows = Math.floor(t * (m.rows + 1));
    return { m: { ...m, get: (i, j) => (i < rows ? m.get(i, j) : Number.NaN) }, column: null };
  }
  if ((stageId === 'scaled' || stageId === 'masked') && m.id === stageId) {
    // The scores turn into the stage's values, on the shared score scale.
    const from = sliceOf(stageId === 'scaled' ? tr.scores : tr.scaled, b, head);
    return { m: { ...m, get: (i, j) => mix(from.get(i, j), m.get(i, j), t) }, column: null };
  }
  if (stageId === 'weights' && m.id === 'weights') {
    // The focused row goes from exp(s − max) to its share of the row's sum (the bars show the same).
    const { values } = softmaxRowAt(r, b, head, query, t);
    return {
      m: withRow(m, query, (j) => (m.get(query, j) === -Infinity ? -Infinity : values[j])),
      column: null,
    };
  }
  if (stageId === 'concat' && m.id === 'concat' && r.model.H > 1) {
    // One head after the other, each head's block of d_v columns slides in from the
    // right edge to its place, k·d_v; heads not started yet are blank.
    const { H, dV } = r.model;
    const offsets = Array.from({ length: H }, (_, k) => {
      const p = t * H - k;
      return p <= 0 ? null : Math.round(k * dV + (m.cols - k * dV) * (1 - Math.min(1, p)));
    });
    return {
      m: {
        ...m,
        get: (i, j) => {
          for (let k = H - 1; k >= 0; k--) {
            const off = offsets[k];
            if (off !== null && j >= off && j < off + dV) return m.get(i, k * dV + j - off);
          }
          return Number.NaN;
        },
      },
      column: null,
    };
  }
  if (stageId === 'wo' && m.id === 'wo') {
    // Row by row: token i's concatenated heads times W_O gives its row of the output.
    const rows = Math.floor(t * (m.rows + 1));
    return { m: { ...m, get: (i, j) => (i < rows ? m.get(i, j) : Number.NaN) }, column: null };
  }
  return { m, column: null };
}

/**
 * The focused token's vector `name` at time t of stage `stageId`: q, k and v grow
 * component by component in the Q, K, V stage; the output sums its weighted values
 * key by key in the weights·V stage (as the heatmap's row does). Else the engine's values.
 */
export function vectorAt(
  r: RunResult,
  stageId: string,
  name: 'q' | 'k' | 'v' | 'output',
  values: Float32Array,
  b: number,
  head: number,
  query: number,
  t: number,
): Float32Array {
  if (t >= 1) return values;
  if (stageId === 'qkv' && name !== 'output') {
    const shown = Math.floor(t * (values.length + 1));
    return values.map((v, d) => (d < shown ? v : 0));
  }
  if (stageId === 'headOutputs' && name === 'output') {
    const tr = r.attention.trace!;
    const w = sliceOf(tr.weights, b, head).row(query);
    const v = sliceOf(tr.v, b, head);
    const keys = Math.min(r.model.T, Math.floor(t * (r.model.T + 1)));
    return values.map((_, d) => {
      let s = 0;
      for (let j = 0; j < keys; j++) s += w[j] * v.row(j)[d];
      return s;
    });
  }
  return values;
}

function mix(a: number, b: number, t: number): number {
  if (!Number.isFinite(b)) return t < 0.5 ? a : b; // a masked score drops out half way
  return a + (b - a) * t;
}

function withRow(m: MatrixView, row: number, value: (j: number) => number): MatrixView {
  return { ...m, get: (i, j) => (i === row ? value(j) : m.get(i, j)) };
}

/** The focused row of softmax at time t: exp(s − max) scaled to its largest (t = 0) → divided by its sum (t = 1). */
export function softmaxRowAt(
  r: RunResult,
  b: number,
  head: number,
  query: number,
  t: number,
): { values: number[]; sum: number } {
  const w = sliceOf(r.attention.trace!.weights, b, head).row(query);
  if (t >= 1) return { values: Array.from(w), sum: w.reduce((a, x) => a + x, 0) };
  // weights ∝ exp(s − max): dividing by the largest weight gives exp(s − max) itself.
  let largest = 0;
  for (const x of w) largest = Math.max(largest, x);
  const scale = largest > 0 ? (1 - t) / largest + t : 1;
  const values = Array.from(w, (x) => x * scale);
  return { values, sum: values.reduce((a, x) => a + x, 0) };
}
