// Several exported SVGs side by side in one file (all heads, a whole batch).
import { s } from '../dom';

/** `title` is written above the parts, so the exported file says what it shows. */
export function composeSvg(parts: SVGSVGElement[], perRow: number, title: string): SVGSVGElement {
  const kTitle = 24;
  let x = 0,
    y = kTitle,
    rowH = 0,
    width = 8 + 7 * title.length;
  const root = s('svg', {
    xmlns: 'http://www.w3.org/2000/svg',
    'font-family': 'system-ui, sans-serif',
  });
  root.append(
    s('title', {}, title),
    s('rect', { width: '100%', height: '100%', fill: '#fff' }),
    s('text', { x: 4, y: 16, 'font-weight': 600, 'font-size': 13 }, title),
  );
  parts.forEach((p, k) => {
    const w = p.width.baseVal.value || Number(p.getAttribute('width'));
    const hh = p.height.baseVal.value || Number(p.getAttribute('height'));
    if (k % perRow === 0 && k) {
      x = 0;
      y += rowH + 10;
      rowH = 0;
    }
    p.setAttribute('x', String(x));
    p.setAttribute('y', String(y));
    root.append(p);
    x += w + 10;
    rowH = Math.max(rowH, hh);
    width = Math.max(width, x);
  });
  root.setAttribute('width', String(width));
  root.setAttribute('height', String(y + rowH));
  root.setAttribute('viewBox', `0 0 ${width} ${y + rowH}`);
  return root;
}
