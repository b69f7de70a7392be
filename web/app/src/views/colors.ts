// Colour-blind-safe scales, the same meaning everywhere: viridis for weights on a
// fixed [0, 1], purple (negative) – white (0) – orange (positive) for signed values
// (both readable with the common colour-vision deficiencies).
import { scaleDiverging, scaleSequential } from 'd3-scale';
import { interpolatePuOr, interpolateViridis } from 'd3-scale-chromatic';
import { packRgb } from './paint-cells';

export type ColorKind = 'prob' | 'signed';

export function colorScale(kind: ColorKind, maxAbs: number): (v: number) => string {
  if (kind === 'prob') {
    const s = scaleSequential(interpolateViridis).domain([0, maxAbs > 0 ? maxAbs : 1]);
    return (v) => s(v);
  }
  const m = maxAbs > 0 ? maxAbs : 1;
  // interpolatePuOr runs from purple (0) to orange (1): negative is purple.
  const s = scaleDiverging(interpolatePuOr).domain([-m, 0, m]);
  return (v) => s(v);
}

export const kMaskedColor = '#8a8a8a';

/** Dark or light text, whichever reads better on a background colour. */
export function textOn(color: string): string {
  return textOnRgb(parseColor(color));
}

/** textOn for a background given as [r, g, b]. */
export function textOnRgb([r, g, b]: readonly [number, number, number]): string {
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#111' : '#fff';
}

/** "#rgb", "#rrggbb" or "rgb(r, g, b)" → [r, g, b]. */
export function parseColor(css: string): [number, number, number] {
  if (css.startsWith('#')) {
    const hex = css.length === 4 ? [...css.slice(1)].map((c) => c + c).join('') : css.slice(1, 7);
    return [
      parseInt(hex.slice(0, 2), 16),
      parseInt(hex.slice(2, 4), 16),
      parseInt(hex.slice(4, 6), 16),
    ];
  }
  const m = css.match(/\d+/g) ?? ['0', '0', '0'];
  return [Number(m[0]), Number(m[1]), Number(m[2])];
}

// The last tables built: a redraw of the same matrix (or of the editor and the view
// sharing a scale) reuses them instead of sampling and parsing 256 colours again.
const tables = new Map<string, ColorTable>();

export interface ColorTable {
  at: (v: number) => [number, number, number];
  /** The same colour as one RGBA word (paintWords). */
  word: (v: number) => number;
}

/** The scale sampled at 256 steps, for drawing many cells fast. */
export function colorTable(kind: ColorKind, maxAbs: number): ColorTable {
  const key = `${kind}:${maxAbs}`;
  let table = tables.get(key);
  if (!table) {
    if (tables.size >= 16) tables.clear();
    tables.set(key, (table = buildTable(kind, maxAbs)));
  }
  return table;
}

function buildTable(kind: ColorKind, maxAbs: number): ColorTable {
  const scale = colorScale(kind, maxAbs);
  const lo = kind === 'prob' ? 0 : -(maxAbs || 1);
  const hi = maxAbs || 1;
  const table = Array.from({ length: 256 }, (_, k) =>
    parseColor(scale(lo + ((hi - lo) * k) / 255)),
  );
  const words = Uint32Array.from(table, packRgb);
  const step = (v: number) => Math.max(0, Math.min(255, Math.round(((v - lo) / (hi - lo)) * 255)));
  return { at: (v) => table[step(v)]!, word: (v) => words[step(v)]! };
}

/** Range shown by the legend: [0, max] for weights, [−max, max] for signed values. */
export function legendRange(kind: ColorKind, maxAbs: number): [number, number] {
  const m = maxAbs || 1;
  return kind === 'prob' ? [0, m] : [-m, m];
}
