// Index arithmetic over the engine's row-major tensors, in one place. Every view,
// panel and check reads a tensor through these: (B, H, T, X) per sequence and head,
// (B, T, X) per sequence, (T, X) alone.
import type { TensorOut } from 'attnscope';

export interface Slice {
  rows: number;
  cols: number;
  get(i: number, j: number): number;
  row(i: number): Float32Array; // a view, not a copy
  data: Float32Array; // the whole matrix, row-major: a view, not a copy
}

/**
 * The (rows × cols) matrix of sequence `b` and head `h` of a tensor whose last two
 * axes are the matrix: shape (B, H, R, C), (B, R, C) or (R, C). `h` is ignored
 * below four axes, `b` below three.
 */
export function sliceOf(t: TensorOut, b = 0, h = 0): Slice {
  const sh = t.shape;
  const cols = sh[sh.length - 1];
  const rows = sh.length >= 2 ? sh[sh.length - 2] : 1;
  const heads = sh.length === 4 ? sh[1] : 1;
  const seq = sh.length >= 3 ? b : 0;
  const head = sh.length === 4 ? h : 0;
  const base = (seq * heads + head) * rows * cols;
  const data = t.data;
  return {
    rows,
    cols,
    get: (i, j) => data[base + i * cols + j],
    row: (i) => data.subarray(base + i * cols, base + (i + 1) * cols),
    data: data.subarray(base, base + rows * cols),
  };
}

/** Row i of sequence b, head h: a view into the tensor. */
export function rowOf(t: TensorOut, b: number, h: number, i: number): Float32Array {
  return sliceOf(t, b, h).row(i);
}

/** The largest |value| over the finite entries of slices (for a shared colour scale). */
export function largestAbs(...slices: Slice[]): number {
  let a = 0;
  for (const s of slices)
    for (let i = 0; i < s.rows; i++)
      for (const v of s.row(i)) if (Number.isFinite(v) && Math.abs(v) > a) a = Math.abs(v);
  return a;
}

/** Columns [start, start + count) of a (rows × cols) row-major matrix: one head's block of W_Q, W_K or W_V. */
export function columnBlock(
  data: Float32Array,
  rows: number,
  cols: number,
  start: number,
  count: number,
): Pick<Slice, 'rows' | 'cols' | 'get'> {
  return { rows, cols: count, get: (i, j) => data[i * cols + start + j] };
}
