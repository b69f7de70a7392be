// The stage's matrices as heatmaps, side by side (Q, K and V in one row), built up
// over the stage's time t (anim/frames.ts); softmax adds the focused row as bars.
// Long inputs open zoomed in on the focused query, with an overview to move over.
import { useRef } from 'preact/hooks';
import { frameOf } from '../anim/frames';
import { stageTime } from '../anim/clock';
import { inspectCell, selectQuery, setPerMatrixScale, setZoom } from '../store';
import { HeatmapCanvas, Legend, MatrixFigure } from './common';
import { RowBars } from './row-bars';
import { colourRange, rangeNote } from './scales';
import type { ViewProps } from './types';
import { clampStart, kZoomFrom, windowOf, type Window } from './zoom';

const kZooms = [16, 32, 64];
const kMinZoom = 4; // tokens: the closest zoom
const kZoomStep = 1.5; // one press of + or −, one notch of a pinch
const kBesideFrom = 700; // px of view from which the side column sits beside the figure
const kSideWidth = 260; // px kept for the side column
const kSideBars = 360; // px of the row bars drawn in it

export function HeatmapView({ r, stages, view, b, head, query, width }: ViewProps) {
  const T = r.model.T;
  const z = view.zoom; // in the view state, so a shared link keeps it
  const zoom = z ? z.size : T > kZoomFrom ? 32 : 0;
  const stage = stages[view.stage];
  const mats = stage.matrices(r, b, head);
  const t = stageTime.value;
  const n = zoom && zoom < T ? zoom : T;
  const row0 = clampStart(query - n / 2, n, T);
  const col0 = clampStart(z?.col ?? row0, n, T);
  const zoomBy = (factor: number) => {
    const next = Math.round(n * factor);
    setZoom({ size: next >= T ? 0 : Math.max(kMinZoom, Math.min(T, next)), col: z?.col ?? null });
  };
  const pinch = useRef<number | null>(null); // the distance between two fingers at the last zoom step
  const distance = (e: TouchEvent) =>
    Math.hypot(
      e.touches[0].clientX - e.touches[1].clientX,
      e.touches[0].clientY - e.touches[1].clientY,
    );
  const win = (rows: number, cols: number): Window => ({
    row0: rows === T ? row0 : 0,
    col0: cols === T ? col0 : 0,
    rows: rows === T ? n : rows,
    cols: cols === T ? n : cols,
  });
  // One matrix on a wide view leaves room beside it: its tools, overview and row bars
  // go there (figures.css), so the figure starts higher on the screen.
  const beside = mats.length === 1 && width >= kBesideFrom;
  const per =
    mats.length > 1
      ? Math.max(180, Math.floor(width / Math.min(3, mats.length)) - 12)
      : beside
        ? width - kSideWidth
        : width;
  const ranges = mats.map((m) => colourRange(r, stage.id, m, b, head, view.perMatrixScale, mats));
  const square = mats.find((m) => m.rows === T && m.cols === T);
  // The tools, overview and row bars: before the figures when several share them,
  // after (or beside) a single figure, so that it comes first on a phone.
  const side = (
    <div class="figure-side" key="side">
      <div class="view-tools">
        {/* One legend per group of matrices sharing a colour range. */}
        {mats.map(
          (m, k) =>
            mats.findIndex((x) => x.scaleGroup === m.scaleGroup) === k && (
              <Legend
                kind={m.kind}
                range={ranges[k]}
                note={`${m.scaleGroup === 'weights' ? 'W_Q, W_K, W_V: ' : ''}${rangeNote(stage.id, m.kind, view.perMatrixScale)}`}
              />
            ),
        )}
        <label class="check">
          <input
            type="checkbox"
            id="per-matrix"
            checked={view.perMatrixScale}
            onChange={(e) => setPerMatrixScale((e.currentTarget as HTMLInputElement).checked)}
          />{' '}
          colours per matrix
        </label>
        {T > 16 && (
          <span class="zoom-tools">
            <label>
              zoom{' '}
              <select
                id="zoom"
                value={String(zoom)}
                onChange={(e) =>
                  setZoom({ size: Number((e.currentTarget as HTMLSelectElement).value), col: null })
                }
              >
                <option value="0">{`all ${T} tokens`}</option>
                {[...new Set([...kZooms.filter((k) => k < T), ...(zoom && zoom < T ? [zoom] : [])])]
                  .sort((a, b) => a - b)
                  .map((k) => (
                    <option value={String(k)}>{`${k} tokens around the query`}</option>
                  ))}
              </select>
            </label>
            <button
              type="button"
              class="small"
              id="zoom-out"
              aria-label="Zoom out"
              disabled={n >= T}
              onClick={() => zoomBy(kZoomStep)}
            >
              −
            </button>
            <button
              type="button"
              class="small"
              id="zoom-in"
              aria-label="Zoom in"
              disabled={n <= kMinZoom}
              onClick={() => zoomBy(1 / kZoomStep)}
            >
              +
            </button>
          </span>
        )}
      </div>
      {n < T && square && (
        <figure class="overview">
          <figcaption>{`Overview: tokens ${row0 + 1}–${row0 + n} (rows) × ${col0 + 1}–${col0 + n} (columns) of ${T}. Click or drag to move.`}</figcaption>
          <HeatmapCanvas
            m={square}
            opts={{
              compact: true,
              maxWidth: 170,
              maxHeight: 170,
              range: ranges[mats.indexOf(square)],
              brush: true,
              window: win(T, T),
              highlightRow: query,
              onSelect: (i, j) => {
                selectQuery(i);
                setZoom({ size: zoom, col: Math.round(clampStart(j - n / 2, n, T)) });
              },
            }}
          />
        </figure>
      )}
      {stage.id === 'weights' && (
        <RowBars
          r={r}
          b={b}
          head={head}
          query={query}
          t={t}
          from={col0}
          count={n}
          width={beside ? kSideBars : 600}
        />
      )}
    </div>
  );
  // Ctrl + wheel (a trackpad's pinch) and a two-finger pinch zoom; the page scrolls as usual otherwise.
  const figures = (
    <div
      key="figures"
      class={`figures n${Math.min(3, mats.length)}${T > 16 ? ' zoomable' : ''}`}
      onWheel={(e) => {
        if (T <= 16 || !(e.ctrlKey || e.metaKey)) return;
        e.preventDefault();
        zoomBy(e.deltaY > 0 ? kZoomStep : 1 / kZoomStep);
      }}
      onTouchStart={(e) => {
        pinch.current = e.touches.length === 2 ? distance(e) : null;
      }}
      onTouchMove={(e) => {
        if (T <= 16 || e.touches.length !== 2 || pinch.current === null) return;
        e.preventDefault();
        const ratio = distance(e) / pinch.current;
        if (ratio > kZoomStep || ratio < 1 / kZoomStep) {
          zoomBy(1 / ratio);
          pinch.current = distance(e);
        }
      }}
    >
      {mats.map((m, k) => {
        const frame = frameOf(r, stage.id, m, b, head, query, t);
        const w = win(m.rows, m.cols);
        const local = (i: number | null, start: number, size: number) =>
          i != null && i >= start && i < start + size ? i - start : null;
        const sel =
          view.inspect === m.id
            ? [local(view.sel.query, w.row0, w.rows), local(view.sel.key, w.col0, w.cols)]
            : [null, null];
        return (
          <MatrixFigure
            key={`${stage.id}:${k}`}
            m={windowOf(m, w)}
            whole={m}
            frame={windowOf(frame.m, w)}
            range={ranges[k]}
            opts={{
              maxWidth: per,
              // A few rows of text fit above the figure on a laptop screen; the cells take the rest.
              maxHeight: Math.max(240, window.innerHeight - 400),
              selected: sel[0] != null && sel[1] != null ? [sel[0], sel[1]] : null,
              highlightRow: m.rows === T ? local(query, w.row0, w.rows) : null,
              highlightCol: local(frame.column, w.col0, w.cols),
              onSelect: (i, j) => inspectCell(m.id, i + w.row0, j + w.col0),
            }}
          />
        );
      })}
    </div>
  );
  return (
    <div class={`heatmap-view${beside ? ' beside' : ''}`}>
      {mats.length === 1 ? [figures, side] : [side, figures]}
    </div>
  );
}
