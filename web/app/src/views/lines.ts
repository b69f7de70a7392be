// Head view: queries on the left, keys on the right, one line per pair with its
// opacity and width set by the attention weight.
import { s } from '../dom';
import { fmt } from '../format';

export interface LinesInput {
  tokens: string[];
  weights: (i: number, j: number) => number;
  query: number; // highlighted query
  title: string;
  onQuery?: (i: number) => void;
}

const kRow = 20;
const kAllLinesUpTo = 48; // beyond this only the selected query's lines are drawn

export function linesSvg(inp: LinesInput): SVGSVGElement {
  const T = inp.tokens.length;
  const width = 520;
  const height = 40 + T * kRow;
  const xl = 150;
  const xr = width - 150;
  const root = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg', width, height, viewBox: `0 0 ${width} ${height}`, class: 'lines-view',
    'font-family': 'system-ui, sans-serif', 'font-size': 12, role: 'img',
    'aria-label': `${inp.title}. Left column: queries; right column: keys. Line thickness is the attention weight of the query on the key.`,
  });
  root.append(s('title', {}, inp.title));
  root.append(s('text', { x: xl, y: 16, 'text-anchor': 'end', 'font-weight': 600, fill: 'currentColor' }, 'query'));
  root.append(s('text', { x: xr, y: 16, 'font-weight': 600, fill: 'currentColor' }, 'key'));
  const y = (i: number) => 36 + i * kRow;
  const g = s('g', {});
  for (let i = 0; i < T; i++) {
    if (T > kAllLinesUpTo && i !== inp.query) continue;
    for (let j = 0; j < T; j++) {
      const w = inp.weights(i, j);
      if (!(w > 0.005)) continue;
      const on = i === inp.query;
      g.append(s('line', {
        x1: xl + 6, y1: y(i), x2: xr - 6, y2: y(j),
        stroke: on ? '#e66100' : '#5d3a9b', 'stroke-width': (on ? 1 : 0.5) + 5 * w,
        'stroke-opacity': Math.min(1, (on ? 0.25 : 0.08) + w * (on ? 0.9 : 0.5)),
      }, s('title', {}, `${inp.tokens[i]} → ${inp.tokens[j]}: ${fmt(w, 4)}`)));
    }
  }
  root.append(g);
  inp.tokens.forEach((t, i) => {
    const bold = i === inp.query ? 700 : 400;
    const label = s('text', { x: xl, y: y(i), 'text-anchor': 'end', 'dominant-baseline': 'middle', 'font-weight': bold, fill: 'currentColor', class: 'query-label' }, `${t} ${i + 1}`);
    if (inp.onQuery) label.addEventListener('click', () => inp.onQuery!(i));
    root.append(label);
    root.append(s('text', { x: xr, y: y(i), 'dominant-baseline': 'middle', fill: 'currentColor' }, `${i + 1} ${t}`));
  });
  return root;
}
