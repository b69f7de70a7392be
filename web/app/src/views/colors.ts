// Colour-blind-safe scales: viridis for weights in [0, 1], purple–orange for signed
// values (both readable with the common colour-vision deficiencies).
import { scaleDiverging, scaleSequential } from 'd3-scale';
import { interpolatePuOr, interpolateViridis } from 'd3-scale-chromatic';

export type ColorKind = 'prob' | 'signed';

export function colorScale(kind: ColorKind, maxAbs: number): (v: number) => string {
  if (kind === 'prob') {
    const s = scaleSequential(interpolateViridis).domain([0, 1]);
    return (v) => s(v);
  }
  const m = maxAbs > 0 ? maxAbs : 1;
  const s = scaleDiverging((t: number) => interpolatePuOr(1 - t)).domain([-m, 0, m]);
  return (v) => s(v);
}

export const kMaskedColor = '#8a8a8a';

/** Dark or light text, whichever reads better on a background colour. */
export function textOn(color: string): string {
  const m = color.match(/\d+/g);
  if (!m) return '#000';
  const [r, g, b] = m.map(Number);
  return 0.299 * r + 0.587 * g + 0.114 * b > 140 ? '#111' : '#fff';
}
