// A small matrix drawn as SVG cells with token labels: the modern views' heatmaps.
// A hidden cell (masked, skipped) is hatched grey, never a colour of the scale, so
// it cannot be mistaken for a small weight.
import type { ComponentChildren } from 'preact';

export interface GridCell {
  fill: string | null; // null: hidden
  text?: string; // the cell's <title>
}

export interface GridBox {
  i0: number; // first row
  j0: number; // first column
  rows: number;
  cols: number;
  cls: string; // CSS class: how the box is drawn
}

export interface CellGridProps {
  id: string; // unique on the page (the hatch pattern's id)
  label: string; // what the figure shows, for screen readers
  rows: number;
  cols: number;
  rowLabels: string[];
  colLabels: string[];
  cell: (i: number, j: number) => GridCell;
  width: number; // px available
  boxes?: GridBox[];
  // A row whose label is drawn even where the rows are too thin for a label each (the
  // step's new row); its thinned neighbours give way to it.
  keepRowLabel?: number;
  children?: ComponentChildren; // drawn over the cells, in cell coordinates (one unit a cell)
}

const kLeft = 84;

const short = (s: string) => (s.length > 11 ? `${s.slice(0, 10)}…` : s);

/** The width a grid of `cols` columns needs for cells of `size` px. */
export function gridWidthFor(cols: number, size: number): number {
  return kLeft + 8 + cols * size;
}

/** The largest cells of a grid of `cols` columns that fit in `width` px. */
export function cellsFitting(cols: number, width: number): number {
  return Math.floor((width - kLeft - 8) / Math.max(1, cols));
}

/** Cell size and margins: the top one as high as the longest column label, turned 60°, needs. */
export function gridGeometry(cols: number, width: number, colLabels: string[] = []) {
  const size = Math.max(5, Math.min(30, cellsFitting(cols, width)));
  const font = Math.max(7, Math.min(11, size - 2));
  const longest = Math.max(1, ...colLabels.map((l) => short(l).length));
  return { size, font, left: kLeft, top: Math.min(64, Math.ceil(longest * font * 0.55 + 8)) };
}

export function CellGrid(p: CellGridProps) {
  const { size, font, left, top } = gridGeometry(p.cols, p.width, p.colLabels);
  const w = left + p.cols * size + 28; // room for the last rotated label
  const h = top + p.rows * size + 4;
  const every = Math.max(1, Math.ceil(12 / size));
  const kept = p.keepRowLabel;
  const labelled = (i: number) =>
    i === kept || (i % every === 0 && (kept === undefined || Math.abs(kept - i) >= every));
  const cells = [];
  for (let i = 0; i < p.rows; i++)
    for (let j = 0; j < p.cols; j++) {
      const c = p.cell(i, j);
      cells.push(
        <rect
          x={left + j * size}
          y={top + i * size}
          width={size}
          height={size}
          fill={c.fill ?? `url(#${p.id}-hidden)`}
          class={c.fill ? 'cell' : 'cell hidden'}
          data-i={i}
          data-j={j}
        >
          {c.text && <title>{c.text}</title>}
        </rect>,
      );
    }
  return (
    <svg
      class="cell-grid"
      width={w}
      height={h}
      viewBox={`0 0 ${w} ${h}`}
      role="img"
      aria-label={p.label}
      font-family="system-ui, sans-serif"
      font-size={font}
    >
      <defs>
        <pattern id={`${p.id}-hidden`} width="6" height="6" patternUnits="userSpaceOnUse">
          <rect width="6" height="6" fill="#e4e4e4" />
          <path d="M0 6 L6 0" stroke="#9a9a9a" stroke-width="1" />
        </pattern>
      </defs>
      {p.rowLabels.map(
        (l, i) =>
          labelled(i) && (
            <text
              x={left - 4}
              y={top + (i + 0.5) * size}
              text-anchor="end"
              dominant-baseline="middle"
              fill="currentColor"
            >
              {short(l)}
            </text>
          ),
      )}
      {p.colLabels.map(
        (l, j) =>
          j % every === 0 && (
            <text
              transform={`translate(${left + (j + 0.5) * size} ${top - 4}) rotate(-60)`}
              fill="currentColor"
            >
              {short(l)}
            </text>
          ),
      )}
      <g>{cells}</g>
      {p.boxes?.map((b) => (
        <rect
          x={left + b.j0 * size}
          y={top + b.i0 * size}
          width={b.cols * size}
          height={b.rows * size}
          class={`grid-box ${b.cls}`}
          fill="none"
        />
      ))}
      {p.children && <g transform={`translate(${left} ${top}) scale(${size})`}>{p.children}</g>}
    </svg>
  );
}

/** A key to the grid's marks: a swatch and what it means. */
export function Swatch({ kind, children }: { kind: 'hidden' | 'band' | 'now'; children: string }) {
  return (
    <span class={`swatch swatch-${kind}`}>
      <span aria-hidden="true" />
      {children}
    </span>
  );
}
