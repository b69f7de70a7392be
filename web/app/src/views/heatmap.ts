// A matrix drawn on a canvas: one pixel per cell blown up without smoothing, so even
// 512×512 draws in a few milliseconds; values are written in cells only when they fit.
import { cellAnchor } from '../anchor';
import { announce, h } from '../dom';
import { fmt, full } from '../format';
import { colorScale, colorTable, kMaskedColor, parseColor, textOnRgb } from './colors';
import { drawLegend, labelLayer } from './heatmap-labels';
import { kTextCell, layout, type Layout } from './heatmap-layout';
import { maxAbs, type MatrixView } from './matrix';

export interface HeatmapOptions {
  selected?: [number, number] | null;
  highlightRow?: number | null;
  onSelect?: (i: number, j: number) => void;
  maxWidth?: number;
  compact?: boolean; // no labels or legend (small multiples; the caption names the axes)
  range?: number; // the |value| at the ends of the colour scale; default: this matrix's largest
  maxHeight?: number; // px of cells; default kMaxHeight
  highlightCol?: number | null; // a key column lit up (the animation's current key)
  window?: { row0: number; col0: number; rows: number; cols: number } | null; // outlined (an overview's zoomed part)
  brush?: boolean; // dragging selects too (an overview moved over)
}

// Theme colours from the root, read once: getComputedStyle after DOM changes forces a
// style recalculation on every draw. forgetTheme() drops them when the scheme changes.
let theme: { fg: string; panel: string } | null = null;
export function forgetTheme(): void {
  theme = null;
}
function themeColors(): { fg: string; panel: string } {
  if (!theme) {
    const style = getComputedStyle(document.documentElement);
    theme = {
      fg: style.getPropertyValue('--fg').trim() || '#222',
      panel: style.getPropertyValue('--panel').trim() || '#fff',
    };
  }
  return theme;
}

// One offscreen canvas for the one-pixel-per-cell image, reused by every draw.
let offscreen: HTMLCanvasElement | null = null;

export function drawHeatmap(
  canvas: HTMLCanvasElement,
  m: MatrixView,
  opts: HeatmapOptions,
): Layout {
  const L = layout(m, opts.maxWidth ?? 720, opts.compact, opts.maxHeight);
  const dpr = window.devicePixelRatio || 1;
  // Resizing reallocates the canvas's backing store (the costly part of a redraw):
  // only do it when the size really changes.
  const pw = Math.ceil(L.width * dpr);
  const ph = Math.ceil(L.height * dpr);
  if (canvas.width !== pw) canvas.width = pw;
  if (canvas.height !== ph) canvas.height = ph;
  if (canvas.style.width !== `${L.width}px`) canvas.style.width = `${L.width}px`;
  if (canvas.style.height !== `${L.height}px`) canvas.style.height = `${L.height}px`;
  // Where the cells are, in CSS px, for code that points at a cell (the e2e tests).
  const geometry = `${L.left} ${L.top} ${L.cell}`;
  if (canvas.dataset.cells !== geometry) canvas.dataset.cells = geometry;
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  const { fg, panel } = themeColors();
  ctx.fillStyle = panel;
  ctx.fillRect(0, 0, L.width, L.height);

  // Cells: one pixel each in an offscreen image, scaled up without smoothing.
  const largest = opts.range ?? maxAbs(m); // one pass over the cells, shared by the scale, the table and the legend
  const color = colorScale(m.kind, largest);
  const lut = colorTable(m.kind, largest);
  const masked = parseColor(kMaskedColor);
  const blank = parseColor(panel);
  const img = new ImageData(m.cols, m.rows);
  const px = img.data; // read once: each read of img.data is a call into the DOM
  const writeNumbers = L.cell >= kTextCell && m.rows * m.cols <= 64 * 64;
  // The colour of each cell's number, found from the cell's colour on the way.
  const textColors: string[] = [];
  for (let i = 0; i < m.rows; i++)
    for (let j = 0; j < m.cols; j++) {
      const v = m.get(i, j);
      // NaN: not computed yet (a frame of an animation): drawn blank.
      const c = Number.isFinite(v) ? lut.at(v) : Number.isNaN(v) ? blank : masked;
      const o = (i * m.cols + j) * 4;
      px[o] = c[0];
      px[o + 1] = c[1];
      px[o + 2] = c[2];
      px[o + 3] = 255;
      if (writeNumbers)
        textColors.push(Number.isNaN(v) ? '' : Number.isFinite(v) ? textOnRgb(c) : '#fff');
    }
  const off = (offscreen ??= document.createElement('canvas'));
  if (off.width !== m.cols) off.width = m.cols;
  if (off.height !== m.rows) off.height = m.rows;
  off.getContext('2d')!.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, 0, 0, m.cols, m.rows, L.left, L.top, L.cell * m.cols, L.cell * m.rows);

  // Masked cells get a hatch so they are not read as a colour of the scale.
  if (L.cell >= 6) {
    ctx.strokeStyle = 'rgba(255,255,255,0.55)';
    ctx.lineWidth = 1;
    ctx.beginPath(); // one path for all hatches: a causal 64 × 64 matrix has 2016
    for (let i = 0; i < m.rows; i++)
      for (let j = 0; j < m.cols; j++)
        if (m.get(i, j) === -Infinity) {
          const x = L.left + j * L.cell;
          const y = L.top + i * L.cell;
          ctx.moveTo(x, y + L.cell);
          ctx.lineTo(x + L.cell, y);
        }
    ctx.stroke();
  }

  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  if (writeNumbers) {
    ctx.textAlign = 'center';
    // One pass per text colour: setting fillStyle parses a colour each time.
    for (const textColor of new Set(textColors)) {
      if (!textColor) continue;
      ctx.fillStyle = textColor;
      for (let i = 0; i < m.rows; i++)
        for (let j = 0; j < m.cols; j++)
          if (textColors[i * m.cols + j] === textColor)
            ctx.fillText(
              fmt(m.get(i, j), L.cell >= 40 ? 3 : 2),
              L.left + (j + 0.5) * L.cell,
              L.top + (i + 0.5) * L.cell,
            );
    }
  }

  if (!opts.compact) {
    ctx.drawImage(labelLayer(canvas, m, L, fg, dpr), 0, 0, L.width, L.height);
    drawLegend(ctx, m, fg, color, largest);
  }
  if (opts.highlightRow != null && opts.highlightRow < m.rows) {
    ctx.strokeStyle = fg;
    ctx.lineWidth = 2;
    ctx.strokeRect(
      L.left - 1,
      L.top + opts.highlightRow * L.cell - 1,
      L.cell * m.cols + 2,
      L.cell + 2,
    );
  }
  if (opts.highlightCol != null && opts.highlightCol < m.cols) {
    ctx.strokeStyle = fg;
    ctx.lineWidth = 2;
    ctx.strokeRect(
      L.left + opts.highlightCol * L.cell - 1,
      L.top - 1,
      L.cell + 2,
      L.cell * m.rows + 2,
    );
  }
  if (opts.window) {
    const w = opts.window;
    ctx.strokeStyle = fg;
    ctx.lineWidth = 2;
    ctx.strokeRect(
      L.left + w.col0 * L.cell - 1,
      L.top + w.row0 * L.cell - 1,
      w.cols * L.cell + 2,
      w.rows * L.cell + 2,
    );
  }
  if (opts.selected) {
    const [i, j] = opts.selected;
    if (i < m.rows && j < m.cols) {
      ctx.strokeStyle = '#ff2e88';
      ctx.lineWidth = 3;
      ctx.strokeRect(L.left + j * L.cell - 1.5, L.top + i * L.cell - 1.5, L.cell + 3, L.cell + 3);
    }
  }
  return L;
}

interface Drawn {
  m: MatrixView;
  opts: HeatmapOptions;
  L: Layout;
  sel: [number, number];
}
// What each canvas currently shows, so a canvas can be redrawn with new data in place.
const drawn = new WeakMap<HTMLCanvasElement, Drawn>();

function describe(canvas: HTMLCanvasElement, m: MatrixView): void {
  const label = `${m.title}: ${m.rows} rows (${m.rowAxis}) by ${m.cols} columns (${m.colAxis}). Arrow keys move the selected cell; the data table below lists the values.`;
  if (canvas.getAttribute('aria-label') !== label) canvas.setAttribute('aria-label', label);
  if (canvas.dataset.matrix !== m.id) canvas.dataset.matrix = m.id;
}

/**
 * A focusable heatmap: click or arrow keys select a cell. Pass the canvas of the
 * previous update as `reuse` to redraw it in place (no new element, no new backing store).
 */
export function heatmapElement(
  m: MatrixView,
  opts: HeatmapOptions,
  reuse?: HTMLCanvasElement | null,
): HTMLCanvasElement {
  const previous = reuse ? drawn.get(reuse) : undefined;
  if (reuse && previous) {
    describe(reuse, m);
    drawn.set(reuse, {
      m,
      opts,
      L: drawHeatmap(reuse, m, opts),
      sel: opts.selected ?? previous.sel,
    });
    return reuse;
  }
  const canvas = reuse ?? h('canvas');
  canvas.className = 'heatmap';
  canvas.tabIndex = 0;
  canvas.setAttribute('role', 'application'); // arrow keys move the selection, announced through the live region
  canvas.setAttribute('aria-roledescription', 'heatmap');
  describe(canvas, m);
  drawn.set(canvas, { m, opts, L: drawHeatmap(canvas, m, opts), sel: opts.selected ?? [0, 0] });
  // The listeners read what the canvas shows now: it may have been redrawn since.
  const select = (i: number, j: number, speak: boolean) => {
    const d = drawn.get(canvas)!;
    d.sel = [Math.max(0, Math.min(d.m.rows - 1, i)), Math.max(0, Math.min(d.m.cols - 1, j))];
    d.L = drawHeatmap(canvas, d.m, { ...d.opts, selected: d.sel });
    if (speak)
      announce(
        `${d.m.rowLabels[d.sel[0]]}, ${d.m.colLabels[d.sel[1]]}: ${fmt(d.m.get(d.sel[0], d.sel[1]), 4)}`,
      );
    d.opts.onSelect?.(d.sel[0], d.sel[1]);
  };
  const cellAt = (e: MouseEvent): [number, number] | null => {
    const { m: dm, L } = drawn.get(canvas)!;
    const r = canvas.getBoundingClientRect();
    const j = Math.floor((e.clientX - r.left - L.left) / L.cell);
    const i = Math.floor((e.clientY - r.top - L.top) / L.cell);
    return i >= 0 && j >= 0 && i < dm.rows && j < dm.cols ? [i, j] : null;
  };
  canvas.addEventListener('click', (e) => {
    const c = cellAt(e);
    if (!c) return;
    const { L } = drawn.get(canvas)!;
    const r = canvas.getBoundingClientRect();
    cellAnchor.value = {
      x: r.left + L.left + c[1] * L.cell,
      y: r.top + L.top + c[0] * L.cell,
      size: L.cell,
      canvas,
    };
    select(c[0], c[1], false);
  });
  canvas.addEventListener('mousemove', (e) => {
    if (e.buttons === 1 && drawn.get(canvas)!.opts.brush) {
      const c = cellAt(e);
      if (c) select(c[0], c[1], false);
    }
    // A hover tooltip with the exact value; clicking shows the derivation.
    const c = cellAt(e);
    const dm = drawn.get(canvas)!.m;
    canvas.title = c
      ? `${dm.rowLabels[c[0]]} · ${dm.colLabels[c[1]]}: ${full(dm.get(c[0], c[1]))}`
      : '';
  });
  canvas.addEventListener('keydown', (e) => {
    const moves: Record<string, [number, number]> = {
      ArrowUp: [-1, 0],
      ArrowDown: [1, 0],
      ArrowLeft: [0, -1],
      ArrowRight: [0, 1],
      Home: [0, -1e6],
      End: [0, 1e6],
    };
    const d = moves[e.key];
    if (!d) return;
    e.preventDefault();
    const { sel } = drawn.get(canvas)!;
    select(sel[0] + d[0], sel[1] + d[1], true);
  });
  return canvas;
}
