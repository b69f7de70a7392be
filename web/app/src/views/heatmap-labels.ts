// A heatmap's row and column labels, axis names and colour legend on its canvas.
import { fmt } from '../format';
import { kMaskedColor, legendRange } from './colors';
import { kLabelFont, labelFor, type Layout } from './heatmap-layout';
import type { MatrixView } from './matrix';

// Row and column labels and the axis names change only with the tokens and the
// layout: they are drawn once into a layer kept per canvas and copied on redraws
// (a token edit redraws every cell but rarely moves a label).
const labelLayers = new WeakMap<HTMLCanvasElement, { key: string; layer: HTMLCanvasElement }>();

export function labelLayer(
  canvas: HTMLCanvasElement,
  m: MatrixView,
  L: Layout,
  fg: string,
  dpr: number,
): HTMLCanvasElement {
  const key = [
    L.cell,
    L.left,
    L.top,
    L.width,
    L.height,
    dpr,
    fg,
    m.rowAxis,
    m.colAxis,
    m.rowLabels.join('\u0000'),
    m.colLabels.join('\u0000'),
  ].join('\u0001');
  const kept = labelLayers.get(canvas);
  if (kept?.key === key) return kept.layer;
  const layer = kept?.layer ?? document.createElement('canvas');
  // Setting a size, even the same one, reallocates the backing store: only when it changes.
  if (layer.width !== canvas.width) layer.width = canvas.width;
  if (layer.height !== canvas.height) layer.height = canvas.height;
  const ctx = layer.getContext('2d')!;
  ctx.setTransform(1, 0, 0, 1, 0, 0);
  ctx.clearRect(0, 0, layer.width, layer.height);
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.font = kLabelFont;
  ctx.textBaseline = 'middle';
  drawLabelText(ctx, m, L, fg);
  labelLayers.set(canvas, { key, layer });
  return layer;
}

function drawLabelText(ctx: CanvasRenderingContext2D, m: MatrixView, L: Layout, fg: string): void {
  // Labels: every row/column when they fit, else every n-th.
  ctx.fillStyle = fg;
  const stepRows = Math.max(1, Math.ceil(12 / L.cell));
  ctx.textAlign = 'right';
  for (let i = 0; i < m.rows; i += stepRows)
    ctx.fillText(labelFor(m.rowLabels[i] ?? String(i + 1)), L.left - 4, L.top + (i + 0.5) * L.cell);
  ctx.textAlign = 'left';
  for (let j = 0; j < m.cols; j += stepRows) {
    ctx.save();
    ctx.translate(L.left + (j + 0.5) * L.cell, L.top - 4);
    ctx.rotate(-Math.PI / 3);
    ctx.fillText(labelFor(m.colLabels[j] ?? String(j + 1)), 0, 0);
    ctx.restore();
  }
  ctx.font = '600 11px system-ui, sans-serif';
  ctx.fillText(`${m.colAxis} →`, 4, 10);
  ctx.fillText(`↓ ${m.rowAxis}`, 4, 24);
}

/** The colour scale with its end values, in the corner above the row labels. */
export function drawLegend(
  ctx: CanvasRenderingContext2D,
  m: MatrixView,
  fg: string,
  color: (v: number) => string,
  largest: number,
): void {
  const [lo, hi] = legendRange(m.kind, largest);
  for (let k = 0; k < 60; k++) {
    ctx.fillStyle = color(lo + ((hi - lo) * k) / 59);
    ctx.fillRect(4 + k, 40, 1, 8);
  }
  ctx.fillStyle = fg;
  ctx.font = '10px system-ui, sans-serif';
  ctx.textAlign = 'left';
  ctx.fillText(fmt(lo, 2), 4, 56);
  ctx.textAlign = 'right';
  ctx.fillText(fmt(hi, 2), 64, 56);
  ctx.textAlign = 'left';
  ctx.fillStyle = kMaskedColor;
  ctx.fillRect(4, 64, 8, 8);
  ctx.fillStyle = fg;
  ctx.fillText('masked', 16, 68);
}
