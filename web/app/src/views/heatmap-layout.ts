// Where a heatmap's cells, labels and legend go, shared by the canvas and the SVG export.
import type { MatrixView } from './matrix';

export const kMaxCell = 44;
export const kMaxHeight = 1600; // px of cells
export const kTextCell = 30; // below this, numbers are not written in the cells

export function labelFor(text: string, max = 12): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

// The labels' font (heatmap-labels.ts writes them in it), measured once per text.
export const kLabelFont = '11px system-ui, sans-serif';
let measurer: CanvasRenderingContext2D | null = null;
const labelWidths = new Map<string, number>();

function labelWidth(text: string): number {
  let w = labelWidths.get(text);
  if (w === undefined) {
    measurer ??= document.createElement('canvas').getContext('2d')!;
    measurer.font = kLabelFont;
    w = measurer.measureText(text).width;
    if (labelWidths.size > 4096) labelWidths.clear(); // texts typed over a long visit
    labelWidths.set(text, w);
  }
  return w;
}

/**
 * How far right of its column's centre column j's label reaches once turned 60° up:
 * half its length, and the glyphs' half height across the slant with a pixel to spare.
 */
function labelReach(m: MatrixView, j: number): number {
  return 0.5 * labelWidth(labelFor(m.colLabels[j] ?? String(j + 1))) + 6;
}

/**
 * Room to leave right of the last column (at least 8 px) so that no column label,
 * written up from its column's centre, is cut at the picture's edge.
 */
export function labelOverhang(m: MatrixView, cell: number): number {
  let past = 8;
  for (let j = 0; j < m.cols; j++)
    past = Math.max(past, (j + 0.5 - m.cols) * cell + labelReach(m, j));
  return Math.ceil(past);
}

/**
 * Room left of the cells for the row labels (written right-aligned 4 px from the cells,
 * with 2 px to spare): at least the colour legend's 64 px and a margin, and at most the
 * 96 px a heatmap always had.
 */
function rowLabelRoom(m: MatrixView): number {
  let widest = 0;
  for (let i = 0; i < m.rows; i++)
    widest = Math.max(widest, labelWidth(labelFor(m.rowLabels[i] ?? String(i + 1))));
  return Math.min(96, Math.max(72, Math.ceil(widest) + 6));
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
  const left = showLabels ? rowLabelRoom(m) : 8;
  const top = showLabels ? 84 : 8;
  // Bounded in both directions so a 512-token matrix stays a canvas of modest size.
  const room = maxWidth - left;
  let fit = Math.min(kMaxCell, (room - 8) / Math.max(1, m.cols), maxHeight / Math.max(1, m.rows));
  // And small enough that each column's label ends within the width too.
  if (showLabels)
    for (let j = 0; j < m.cols; j++) fit = Math.min(fit, (room - labelReach(m, j)) / (j + 0.5));
  // Small multiples and overviews may draw a cell below one pixel to fit their box.
  const cell = compact ? Math.max(0.1, fit) : Math.max(1, Math.floor(fit));
  const right = showLabels ? labelOverhang(m, cell) : 8;
  return { cell, left, top, width: left + cell * m.cols + right, height: top + cell * m.rows + 8 };
}
