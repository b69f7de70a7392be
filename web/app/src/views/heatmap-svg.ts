// A heatmap as an SVG figure for export.
import { s } from '../dom';
import { fmt } from '../format';
import { colorScale, kMaskedColor, legendRange, textOn } from './colors';
import { drawHeatmap } from './heatmap';
import { kMaxCell, kTextCell, labelFor, labelOverhang } from './heatmap-layout';
import { maxAbs, type MatrixView } from './matrix';

/**
 * The figure for export: its title above, the colour legend, no selection marks.
 * Large matrices embed a cleanly drawn image instead of one rect per cell.
 */
export function heatmapSvg(m: MatrixView, range = maxAbs(m)): SVGSVGElement {
  const kTitle = 24;
  if (m.rows * m.cols > 128 * 128) {
    const canvas = document.createElement('canvas');
    const L = drawHeatmap(canvas, m, { maxWidth: 900, range });
    const root = s('svg', {
      xmlns: 'http://www.w3.org/2000/svg',
      width: L.width,
      height: L.height + kTitle,
      viewBox: `0 0 ${L.width} ${L.height + kTitle}`,
      'font-family': 'system-ui, sans-serif',
      'font-size': 13,
    });
    root.append(
      s('title', {}, m.title),
      s('rect', { width: L.width, height: L.height + kTitle, fill: '#fff' }),
      s('text', { x: 4, y: 16, 'font-weight': 600 }, m.title),
      s('image', {
        href: canvas.toDataURL('image/png'),
        y: kTitle,
        width: L.width,
        height: L.height,
      }),
    );
    return root;
  }
  const cell = Math.max(12, Math.min(kMaxCell, Math.floor(640 / m.cols)));
  const left = 96;
  const top = 84 + kTitle;
  const width = Math.max(left + cell * m.cols + labelOverhang(m, cell), 8 + 7 * m.title.length);
  const height = top + cell * m.rows + 8;
  const color = colorScale(m.kind, range);
  const root = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    'font-family': 'system-ui, sans-serif',
    'font-size': 11,
  });
  root.append(
    s('title', {}, m.title),
    s('rect', { width, height, fill: '#fff' }),
    s('text', { x: 4, y: 16, 'font-weight': 600, 'font-size': 13 }, m.title),
  );
  root.append(
    s('text', { x: 4, y: kTitle + 12, 'font-weight': 600 }, `${m.colAxis} →`),
    s('text', { x: 4, y: kTitle + 26, 'font-weight': 600 }, `↓ ${m.rowAxis}`),
  );
  const [lo, hi] = legendRange(m.kind, range);
  for (let k = 0; k < 60; k += 2)
    root.append(
      s('rect', {
        x: 4 + k,
        y: kTitle + 40,
        width: 2,
        height: 8,
        fill: color(lo + ((hi - lo) * k) / 58),
      }),
    );
  root.append(
    s('text', { x: 4, y: kTitle + 60, 'font-size': 10 }, fmt(lo, 2)),
    s('text', { x: 64, y: kTitle + 60, 'font-size': 10, 'text-anchor': 'end' }, fmt(hi, 2)),
  );
  for (let i = 0; i < m.rows; i++) {
    root.append(
      s(
        'text',
        {
          x: left - 4,
          y: top + (i + 0.5) * cell,
          'text-anchor': 'end',
          'dominant-baseline': 'middle',
        },
        labelFor(m.rowLabels[i]),
      ),
    );
    for (let j = 0; j < m.cols; j++) {
      const v = m.get(i, j);
      const fill = Number.isFinite(v) ? color(v) : kMaskedColor;
      root.append(
        s(
          'rect',
          { x: left + j * cell, y: top + i * cell, width: cell, height: cell, fill },
          s('title', {}, `${m.rowLabels[i]} · ${m.colLabels[j]}: ${v}`),
        ),
      );
      if (cell >= kTextCell)
        root.append(
          s(
            'text',
            {
              x: left + (j + 0.5) * cell,
              y: top + (i + 0.5) * cell,
              'text-anchor': 'middle',
              'dominant-baseline': 'middle',
              fill: Number.isFinite(v) ? textOn(fill) : '#fff',
            },
            fmt(v, 2),
          ),
        );
    }
  }
  for (let j = 0; j < m.cols; j++)
    root.append(
      s(
        'text',
        { transform: `translate(${left + (j + 0.5) * cell},${top - 4}) rotate(-60)` },
        labelFor(m.colLabels[j]),
      ),
    );
  return root;
}
