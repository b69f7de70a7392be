// Pieces every view uses: the heatmap canvas, its data table, the colour legend and
// the export buttons (whose failures are reported on the page).
import { render, type VNode } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { download, matrixCsv, svgText, svgToPng } from '../export';
import { fmt, full } from '../format';
import { colorScale, kMaskedColor, legendRange, type ColorKind } from './colors';
import { heatmapElement, type HeatmapOptions } from './heatmap';
import { heatmapSvg } from './heatmap-svg';
import type { MatrixView } from './matrix';
import { announce, byId } from '../dom';

export function HeatmapCanvas({ m, opts }: { m: MatrixView; opts: HeatmapOptions }) {
  const ref = useRef<HTMLCanvasElement>(null);
  // Drawn in place on every render: the canvas element and its backing store stay.
  useLayoutEffect(() => void heatmapElement(m, opts, ref.current));
  return <canvas ref={ref} />;
}

const kMaxRows = 64;
const kMaxCols = 32;

/** The numbers behind a figure, built only when opened (the CSV has everything). */
export function DataTable({ m }: { m: MatrixView }) {
  const [open, setOpen] = useState(false);
  const rows = Math.min(m.rows, kMaxRows);
  const cols = Math.min(m.cols, kMaxCols);
  return (
    <details
      class="data-table"
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>Data table: {m.title}</summary>
      {open && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={`Data table: ${m.title}`}>
          <table>
            <caption>{`${m.title}. Rows: ${m.rowAxis}. Columns: ${m.colAxis}.`}</caption>
            <thead>
              <tr>
                <th scope="col">{`${m.rowAxis} \\ ${m.colAxis}`}</th>
                {m.colLabels.slice(0, cols).map((l) => (
                  <th scope="col">{l}</th>
                ))}
              </tr>
            </thead>
            <tbody>
              {Array.from({ length: rows }, (_, i) => (
                <tr>
                  <th scope="row">{m.rowLabels[i]}</th>
                  {Array.from({ length: cols }, (_, j) => {
                    const v = m.get(i, j);
                    return <td title={full(v)}>{fmt(v, 4)}</td>;
                  })}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {open && (rows < m.rows || cols < m.cols) && (
        <p class="note">{`Showing ${rows} of ${m.rows} rows and ${cols} of ${m.cols} columns; export CSV for all values.`}</p>
      )}
    </details>
  );
}

/** A colour bar with its end values and what the colours mean. */
export function Legend({ kind, range, note }: { kind: ColorKind; range: number; note?: string }) {
  const [lo, hi] = legendRange(kind, range);
  const color = colorScale(kind, range);
  const stops = Array.from({ length: 24 }, (_, k) => color(lo + ((hi - lo) * k) / 23));
  const meaning = kind === 'prob' ? 'weight' : 'purple negative, white 0, orange positive';
  return (
    <p class="legend">
      <svg width="96" height="10" aria-hidden="true">
        {stops.map((c, k) => (
          <rect x={k * 4} width="4" height="10" fill={c} />
        ))}
      </svg>
      <span>{`${fmt(lo, 2)} … ${fmt(hi, 2)} (${meaning})`}</span>
      <svg width="10" height="10" aria-hidden="true">
        <rect width="10" height="10" fill={kMaskedColor} />
      </svg>
      <span>{`masked${note ? ` · ${note}` : ''}`}</span>
    </p>
  );
}

/** Runs an export; a failure is said on the page, not lost in the console. */
async function exporting(what: string, work: () => Promise<void> | void): Promise<void> {
  try {
    await work();
    announce(`${what} exported.`);
  } catch (e) {
    const err = byId('error');
    err.hidden = false;
    err.textContent = `Export of ${what} failed: ${e instanceof Error ? e.message : String(e)}`;
  }
}

export function fileName(title: string): string {
  return (
    title
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'figure'
  );
}

/**
 * The <svg> a component draws, drawn off the page: an export can hold the engine's
 * final values while the page shows a moment of an animation.
 */
export function svgOf(picture: VNode): SVGSVGElement {
  const box = document.createElement('div');
  render(picture, box);
  const svg = box.querySelector('svg');
  if (!svg) throw new Error('the figure drew no SVG');
  return svg;
}

export interface Exports {
  svg: () => SVGSVGElement;
  png?: () => Promise<Blob>; // default: the SVG rendered to PNG
  csv?: () => string;
}

export function ExportBar({ name, exports }: { name: string; exports: Exports }) {
  const file = fileName(name);
  const button = (label: string, act: () => Promise<void> | void) => (
    <button
      type="button"
      class="small"
      aria-label={`${label} of ${name}`}
      onClick={() => void exporting(`${label} of ${name}`, act)}
    >
      {label}
    </button>
  );
  return (
    <div class="export-bar">
      {button('PNG', async () =>
        download(await (exports.png ?? (() => svgToPng(exports.svg())))(), `${file}.png`),
      )}
      {button('SVG', () =>
        download(new Blob([svgText(exports.svg())], { type: 'image/svg+xml' }), `${file}.svg`),
      )}
      {exports.csv &&
        button('CSV', () =>
          download(new Blob([exports.csv!()], { type: 'text/csv' }), `${file}.csv`),
        )}
    </div>
  );
}

/**
 * A heatmap figure: caption, canvas, legend, exports (titled, without selection
 * marks), data table. The canvas may show `frame` (a moment of an animation); the
 * table and the exports always hold the engine's values, `m`. When `m` is a zoomed
 * window, `whole` is the matrix it is part of: the CSV holds all of it.
 */
export function MatrixFigure({
  m,
  frame = m,
  whole = m,
  opts,
  range,
}: {
  m: MatrixView;
  frame?: MatrixView;
  whole?: MatrixView;
  opts: HeatmapOptions;
  range: number;
}) {
  const labels = (list: string[]) => list.slice(0, 64).join(', ') + (list.length > 64 ? ', …' : '');
  return (
    <figure class="matrix" data-matrix={m.id}>
      <figcaption>
        <strong>{m.title}</strong>
        {` (${m.rows} × ${m.cols}) · rows: ${m.rowAxis}, columns: ${m.colAxis}`}
        <span class="sr-only">{`. Rows: ${labels(m.rowLabels)}. Columns: ${labels(m.colLabels)}.`}</span>
      </figcaption>
      <div class="scroll">
        <HeatmapCanvas m={frame} opts={{ ...opts, range }} />
      </div>
      <ExportBar
        name={m.title}
        exports={{ svg: () => heatmapSvg(m, range), csv: () => matrixCsv(whole) }}
      />
      <DataTable m={m} />
    </figure>
  );
}
