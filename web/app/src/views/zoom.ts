// Long inputs: a window of n × n cells of a square matrix, placed around the focused
// query (rows) and wherever the reader pans (columns); the overview shows where it is.
import type { MatrixView } from './matrix';

export interface Window {
  row0: number;
  col0: number;
  rows: number;
  cols: number;
}

/** Inputs longer than this open zoomed in. */
export const kZoomFrom = 64;

export function clampStart(start: number, n: number, total: number): number {
  return Math.max(0, Math.min(total - n, Math.round(start)));
}

/** The part of `m` inside the window, with its labels; row i of it is row row0 + i of m. */
export function windowOf(m: MatrixView, w: Window): MatrixView {
  return {
    ...m,
    rows: w.rows,
    cols: w.cols,
    get: (i, j) => m.get(w.row0 + i, w.col0 + j),
    rowLabels: m.rowLabels.slice(w.row0, w.row0 + w.rows),
    colLabels: m.colLabels.slice(w.col0, w.col0 + w.cols),
  };
}
