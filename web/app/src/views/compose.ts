// Several exported SVGs side by side in one file (all heads, a whole batch).
import { s } from '../dom';

export function composeSvg(parts: SVGSVGElement[], perRow: number): SVGSVGElement {
  let x = 0, y = 0, rowH = 0, width = 0;
  const root = s('svg', { xmlns: 'http://www.w3.org/2000/svg' });
  parts.forEach((p, k) => {
    const w = p.width.baseVal.value || Number(p.getAttribute('width'));
    const hh = p.height.baseVal.value || Number(p.getAttribute('height'));
    if (k % perRow === 0 && k) { x = 0; y += rowH + 10; rowH = 0; }
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
