// What a view needs to draw a matrix: values, labels, and which axis is which.
import type { ColorKind } from './colors';

export interface MatrixView {
  id: string; // stable name used for export files and inspection
  title: string;
  rows: number;
  cols: number;
  get(i: number, j: number): number;
  rowLabels: string[];
  colLabels: string[];
  rowAxis: string; // e.g. "query (row i)"
  colAxis: string; // e.g. "key (column j)"
  kind: ColorKind;
  scaleGroup?: string; // matrices of a stage in one group share a colour range (default: all of them)
}

export function maxAbs(m: MatrixView): number {
  let a = 0;
  for (let i = 0; i < m.rows; i++)
    for (let j = 0; j < m.cols; j++) {
      const v = m.get(i, j);
      if (Number.isFinite(v)) a = Math.max(a, Math.abs(v));
    }
  return a;
}

/** Label with its 1-based position, so repeated words stay distinguishable. */
export function indexLabels(tokens: readonly string[]): string[] {
  return tokens.map((t, i) => `${i + 1} ${t}`);
}
