// Where a heatmap's cells, labels and legend go, shared by the canvas and the SVG export.
import type { MatrixView } from './matrix';

export const kMaxCell = 44;
export const kMaxHeight = 1600; // px of cells
export const kTextCell = 30; // below this, numbers are not written in the cells

export function labelFor(text: string, max = 12): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export interface Layout {
  cell: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

export function layout(
  m: MatrixView,
  maxWidth: number,
  compact = false,
  maxHeight = kMaxHeight,
): Layout {
  const showLabels = !compact;
  const left = showLabels ? 96 : 8;
  const top = showLabels ? 84 : 8;
  // Bounded in both directions so a 512-token matrix stays a canvas of modest size.
  const fit = Math.min(
    kMaxCell,
    (maxWidth - left - 8) / Math.max(1, m.cols),
    maxHeight / Math.max(1, m.rows),
  );
  // Small multiples and overviews may draw a cell below one pixel to fit their box.
  const cell = compact ? Math.max(0.1, fit) : Math.max(1, Math.floor(fit));
  return { cell, left, top, width: left + cell * m.cols + 8, height: top + cell * m.rows + 8 };
}
