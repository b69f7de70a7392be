// A matrix drawn on a canvas: one pixel per cell blown up without smoothing, so even
// 512×512 draws in a few milliseconds; values are written in cells only when they fit.
import { announce, h, s } from '../dom';
import { fmt, full } from '../format';
import { colorScale, colorTable, kMaskedColor, legendRange, parseColor, textOn } from './colors';
import { maxAbs, type MatrixView } from './matrix';

const kMaxCell = 60;
const kMaxHeight = 1600; // px of cells
const kTextCell = 30; // below this, numbers are not written in the cells

export interface HeatmapOptions {
  selected?: [number, number] | null;
  highlightRow?: number | null;
  onSelect?: (i: number, j: number) => void;
  maxWidth?: number;
  compact?: boolean; // no labels or legend (small multiples; the caption names the axes)
}

function labelFor(text: string, max = 12): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

interface Layout {
  cell: number;
  left: number;
  top: number;
  width: number;
  height: number;
}

function layout(m: MatrixView, maxWidth: number, compact = false): Layout {
  const showLabels = !compact;
  const left = showLabels ? 96 : 8;
  const top = showLabels ? 84 : 8;
  // Bounded in both directions so a 512-token matrix stays a canvas of modest size.
  const cell = Math.max(1, Math.min(kMaxCell, Math.floor((maxWidth - left - 8) / Math.max(1, m.cols)), Math.floor(kMaxHeight / Math.max(1, m.rows))));
  return { cell, left, top, width: left + cell * m.cols + 8, height: top + cell * m.rows + 8 };
}

export function drawHeatmap(canvas: HTMLCanvasElement, m: MatrixView, opts: HeatmapOptions): Layout {
  const L = layout(m, opts.maxWidth ?? 720, opts.compact);
  const dpr = window.devicePixelRatio || 1;
  canvas.width = Math.ceil(L.width * dpr);
  canvas.height = Math.ceil(L.height * dpr);
  canvas.style.width = `${L.width}px`;
  canvas.style.height = `${L.height}px`;
  const ctx = canvas.getContext('2d')!;
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  // Theme colours from the root: the canvas may not be in the document yet.
  const style = getComputedStyle(document.documentElement);
  const fg = style.getPropertyValue('--fg').trim() || '#222';
  ctx.fillStyle = style.getPropertyValue('--panel').trim() || '#fff';
  ctx.fillRect(0, 0, L.width, L.height);

  // Cells: one pixel each in an offscreen image, scaled up without smoothing.
  const largest = maxAbs(m); // one pass over the cells, shared by the scale, the table and the legend
  const color = colorScale(m.kind, largest);
  const lut = colorTable(m.kind, largest);
  const masked = parseColor(kMaskedColor);
  const img = new ImageData(m.cols, m.rows);
  for (let i = 0; i < m.rows; i++)
    for (let j = 0; j < m.cols; j++) {
      const v = m.get(i, j);
      const c = Number.isFinite(v) ? lut.at(v) : masked;
      const o = (i * m.cols + j) * 4;
      img.data[o] = c[0];
      img.data[o + 1] = c[1];
      img.data[o + 2] = c[2];
      img.data[o + 3] = 255;
    }
  const off = document.createElement('canvas');
  off.width = m.cols;
  off.height = m.rows;
  off.getContext('2d')!.putImageData(img, 0, 0);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(off, L.left, L.top, L.cell * m.cols, L.cell * m.rows);

  // Masked cells get a hatch so they are not read as a colour of the scale.
  if (L.cell >= 6) {
    ctx.strokeStyle = 'rgba(255,255,255,0.55)';
    ctx.lineWidth = 1;
    for (let i = 0; i < m.rows; i++)
      for (let j = 0; j < m.cols; j++)
        if (m.get(i, j) === -Infinity) {
          const x = L.left + j * L.cell;
          const y = L.top + i * L.cell;
          ctx.beginPath();
          ctx.moveTo(x, y + L.cell);
          ctx.lineTo(x + L.cell, y);
          ctx.stroke();
        }
  }

  ctx.font = '11px system-ui, sans-serif';
  ctx.textBaseline = 'middle';
  if (L.cell >= kTextCell && m.rows * m.cols <= 64 * 64) {
    ctx.textAlign = 'center';
    for (let i = 0; i < m.rows; i++)
      for (let j = 0; j < m.cols; j++) {
        const v = m.get(i, j);
        ctx.fillStyle = Number.isFinite(v) ? textOn(color(v)) : '#fff';
        ctx.fillText(fmt(v, L.cell >= 40 ? 3 : 2), L.left + (j + 0.5) * L.cell, L.top + (i + 0.5) * L.cell);
      }
  }

  if (!opts.compact) drawLabels(ctx, m, L, fg, color, largest);
  if (opts.highlightRow != null && opts.highlightRow < m.rows) {
    ctx.strokeStyle = fg;
    ctx.lineWidth = 2;
    ctx.strokeRect(L.left - 1, L.top + opts.highlightRow * L.cell - 1, L.cell * m.cols + 2, L.cell + 2);
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

function drawLabels(ctx: CanvasRenderingContext2D, m: MatrixView, L: Layout, fg: string, color: (v: number) => string, largest: number): void {
  // Labels: every row/column when they fit, else every n-th.
  ctx.fillStyle = fg;
  const stepRows = Math.max(1, Math.ceil(12 / L.cell));
  ctx.textAlign = 'right';
  for (let i = 0; i < m.rows; i += stepRows) ctx.fillText(labelFor(m.rowLabels[i] ?? String(i + 1)), L.left - 4, L.top + (i + 0.5) * L.cell);
  ctx.save();
  ctx.textAlign = 'left';
  for (let j = 0; j < m.cols; j += stepRows) {
    ctx.save();
    ctx.translate(L.left + (j + 0.5) * L.cell, L.top - 4);
    ctx.rotate(-Math.PI / 3);
    ctx.fillText(labelFor(m.colLabels[j] ?? String(j + 1)), 0, 0);
    ctx.restore();
  }
  ctx.restore();
  ctx.font = '600 11px system-ui, sans-serif';
  ctx.textAlign = 'left';
  ctx.fillText(`${m.colAxis} →`, 4, 10);
  ctx.fillText(`↓ ${m.rowAxis}`, 4, 24);
  // Legend: the colour scale with its end values.
  const [lo, hi] = legendRange(m.kind, largest);
  for (let k = 0; k < 60; k++) {
    ctx.fillStyle = color(lo + ((hi - lo) * k) / 59);
    ctx.fillRect(4 + k, 40, 1, 8);
  }
  ctx.fillStyle = fg;
  ctx.font = '10px system-ui, sans-serif';
  ctx.fillText(fmt(lo, 2), 4, 56);
  ctx.textAlign = 'right';
  ctx.fillText(fmt(hi, 2), 64, 56);
  ctx.textAlign = 'left';
  ctx.fillStyle = kMaskedColor;
  ctx.fillRect(4, 64, 8, 8);
  ctx.fillStyle = fg;
  ctx.fillText('masked', 16, 68);

}

/** A focusable heatmap: click or arrow keys select a cell. */
export function heatmapElement(m: MatrixView, opts: HeatmapOptions): HTMLElement {
  const canvas = h('canvas', {
    class: 'heatmap',
    tabindex: 0,
    role: 'application', // arrow keys move the selection, announced through the live region
    'aria-roledescription': 'heatmap',
    'aria-label': `${m.title}: ${m.rows} rows (${m.rowAxis}) by ${m.cols} columns (${m.colAxis}). Arrow keys move the selected cell; the data table below lists the values.`,
    'data-matrix': m.id,
  });
  let L = drawHeatmap(canvas, m, opts);
  let sel: [number, number] = opts.selected ?? [0, 0];
  const select = (i: number, j: number, speak: boolean) => {
    sel = [Math.max(0, Math.min(m.rows - 1, i)), Math.max(0, Math.min(m.cols - 1, j))];
    L = drawHeatmap(canvas, m, { ...opts, selected: sel });
    if (speak) announce(`${m.rowLabels[sel[0]]}, ${m.colLabels[sel[1]]}: ${fmt(m.get(sel[0], sel[1]), 4)}`);
    opts.onSelect?.(sel[0], sel[1]);
  };
  canvas.addEventListener('click', (e) => {
    const r = canvas.getBoundingClientRect();
    const j = Math.floor((e.clientX - r.left - L.left) / L.cell);
    const i = Math.floor((e.clientY - r.top - L.top) / L.cell);
    if (i >= 0 && j >= 0 && i < m.rows && j < m.cols) select(i, j, false);
  });
  canvas.addEventListener('mousemove', (e) => {
    // A hover tooltip with the exact value; clicking shows the derivation.
    const r = canvas.getBoundingClientRect();
    const j = Math.floor((e.clientX - r.left - L.left) / L.cell);
    const i = Math.floor((e.clientY - r.top - L.top) / L.cell);
    canvas.title = i >= 0 && j >= 0 && i < m.rows && j < m.cols ? `${m.rowLabels[i]} · ${m.colLabels[j]}: ${full(m.get(i, j))}` : '';
  });
  canvas.addEventListener('keydown', (e) => {
    const moves: Record<string, [number, number]> = { ArrowUp: [-1, 0], ArrowDown: [1, 0], ArrowLeft: [0, -1], ArrowRight: [0, 1], Home: [0, -1e6], End: [0, 1e6] };
    const d = moves[e.key];
    if (!d) return;
    e.preventDefault();
    select(sel[0] + d[0], sel[1] + d[1], true);
  });
  return canvas;
}

/** Vector version for export; large matrices embed the rendered image instead of one rect per cell. */
export function heatmapSvg(m: MatrixView, canvas: HTMLCanvasElement | null): SVGSVGElement {
  if (m.rows * m.cols > 128 * 128 && canvas) {
    const w = parseFloat(canvas.style.width);
    const hgt = parseFloat(canvas.style.height);
    return s('svg', { xmlns: 'http://www.w3.org/2000/svg', width: w, height: hgt, viewBox: `0 0 ${w} ${hgt}` },
      s('title', {}, m.title), s('image', { href: canvas.toDataURL('image/png'), width: w, height: hgt }));
  }
  const cell = Math.max(12, Math.min(kMaxCell, Math.floor(640 / m.cols)));
  const left = 96;
  const top = 84;
  const width = left + cell * m.cols + 8;
  const height = top + cell * m.rows + 8;
  const color = colorScale(m.kind, maxAbs(m));
  const root = s('svg', { xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}`, 'font-family': 'system-ui, sans-serif', 'font-size': 11 });
  root.append(s('title', {}, m.title), s('rect', { width, height, fill: '#fff' }));
  root.append(s('text', { x: 4, y: 12, 'font-weight': 600 }, `${m.colAxis} →`), s('text', { x: 4, y: 26, 'font-weight': 600 }, `↓ ${m.rowAxis}`));
  const [lo, hi] = legendRange(m.kind, maxAbs(m));
  for (let k = 0; k < 60; k += 2) root.append(s('rect', { x: 4 + k, y: 40, width: 2, height: 8, fill: color(lo + ((hi - lo) * k) / 58) }));
  root.append(s('text', { x: 4, y: 60, 'font-size': 10 }, fmt(lo, 2)), s('text', { x: 64, y: 60, 'font-size': 10, 'text-anchor': 'end' }, fmt(hi, 2)));
  for (let i = 0; i < m.rows; i++) {
    root.append(s('text', { x: left - 4, y: top + (i + 0.5) * cell, 'text-anchor': 'end', 'dominant-baseline': 'middle' }, labelFor(m.rowLabels[i])));
    for (let j = 0; j < m.cols; j++) {
      const v = m.get(i, j);
      const fill = Number.isFinite(v) ? color(v) : kMaskedColor;
      root.append(s('rect', { x: left + j * cell, y: top + i * cell, width: cell, height: cell, fill }, s('title', {}, `${m.rowLabels[i]} · ${m.colLabels[j]}: ${v}`)));
      if (cell >= kTextCell)
        root.append(s('text', { x: left + (j + 0.5) * cell, y: top + (i + 0.5) * cell, 'text-anchor': 'middle', 'dominant-baseline': 'middle', fill: Number.isFinite(v) ? textOn(fill) : '#fff' }, fmt(v, 2)));
    }
  }
  for (let j = 0; j < m.cols; j++)
    root.append(s('text', { transform: `translate(${left + (j + 0.5) * cell},${top - 4}) rotate(-60)` }, labelFor(m.colLabels[j])));
  return root;
}
