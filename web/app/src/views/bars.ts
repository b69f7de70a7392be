// Vectors as bars: the selected token's embedding, query, key, value and output,
// one bar per component, so their sizes can be compared at a glance.
import { s } from '../dom';
import { fmt } from '../format';

export interface BarSeries {
  name: string;
  values: ArrayLike<number>;
}

export function barsSvg(title: string, series: BarSeries[]): SVGSVGElement {
  const width = 640;
  const rowH = 86;
  const height = 20 + series.length * rowH;
  const root = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}`,
    'font-family': 'system-ui, sans-serif', 'font-size': 11, role: 'img', 'aria-label': `${title}; each bar is one component; the data table lists the values.`,
  });
  root.append(s('title', {}, title));
  series.forEach((ser, k) => {
    const top = 14 + k * rowH;
    const n = ser.values.length;
    let m = 0;
    for (let i = 0; i < n; i++) m = Math.max(m, Math.abs(ser.values[i]));
    m = m || 1;
    const left = 110;
    const bw = Math.max(1, Math.min(40, Math.floor((width - left - 10) / Math.max(1, n))));
    const mid = top + 34;
    root.append(s('text', { x: 4, y: mid, 'dominant-baseline': 'middle', 'font-weight': 600, fill: 'currentColor' }, ser.name));
    root.append(s('line', { x1: left, x2: left + bw * n, y1: mid, y2: mid, stroke: 'currentColor', 'stroke-opacity': 0.4 }));
    for (let i = 0; i < n; i++) {
      const v = ser.values[i];
      const hgt = (Math.abs(v) / m) * 30;
      root.append(s('rect', {
        x: left + i * bw + 1, y: v >= 0 ? mid - hgt : mid, width: Math.max(1, bw - 2), height: Math.max(0.5, hgt),
        fill: v >= 0 ? '#e66100' : '#5d3a9b',
      }, s('title', {}, `${ser.name}[${i}] = ${v}`)));
      if (bw >= 30) root.append(s('text', { x: left + (i + 0.5) * bw, y: v >= 0 ? mid + 12 : mid - 6, 'text-anchor': 'middle', 'font-size': 9, fill: 'currentColor' }, fmt(v, 2)));
    }
  });
  return root;
}
