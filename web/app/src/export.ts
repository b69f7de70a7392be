// Files out of the page: PNG and SVG of any view, CSV of any matrix, JSON of the
// whole state with every intermediate (−Infinity written as the string "-Infinity").
import type { RunResult } from './compute';
import type { AppState } from './state';
import type { MatrixView } from './views/matrix';

export function download(blob: Blob, filename: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = filename;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}

// Characters XML 1.0 forbids (C0 controls other than tab, line feed and carriage
// return, and U+FFFE / U+FFFF): a token may hold them, an SVG file may not.
const kNotXml = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Replaces characters XML forbids with U+FFFD in every text and attribute of `root`. */
function xmlSafe(root: Element): void {
  const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
  const clean = (v: string) => v.replace(kNotXml, '\uFFFD');
  for (let n = walker.nextNode(); n; n = walker.nextNode())
    if (clean(n.nodeValue ?? '') !== n.nodeValue) n.nodeValue = clean(n.nodeValue ?? '');
  for (const el of [root, ...root.querySelectorAll('*')])
    for (const a of el.attributes) if (clean(a.value) !== a.value) a.value = clean(a.value);
}

export function svgText(svg: SVGSVGElement): string {
  const clone = svg.cloneNode(true) as SVGSVGElement;
  xmlSafe(clone);
  clone.setAttribute('xmlns', 'http://www.w3.org/2000/svg');
  // currentColor has no meaning outside the page; fix it to the text colour.
  clone.setAttribute('color', '#1b1b1f');
  if (!clone.querySelector(':scope > rect.bg')) {
    const bg = document.createElementNS('http://www.w3.org/2000/svg', 'rect');
    bg.setAttribute('class', 'bg');
    bg.setAttribute('width', '100%');
    bg.setAttribute('height', '100%');
    bg.setAttribute('fill', '#fff');
    clone.insertBefore(bg, clone.firstChild);
  }
  return `<?xml version="1.0" encoding="UTF-8"?>\n${new XMLSerializer().serializeToString(clone)}`;
}

export async function svgToPng(svg: SVGSVGElement): Promise<Blob> {
  const text = svgText(svg);
  const url = URL.createObjectURL(new Blob([text], { type: 'image/svg+xml' }));
  try {
    const img = new Image();
    img.src = url;
    await img.decode();
    const scale = 2;
    const canvas = document.createElement('canvas');
    canvas.width = Math.max(1, Math.round(svg.width.baseVal.value * scale));
    canvas.height = Math.max(1, Math.round(svg.height.baseVal.value * scale));
    const ctx = canvas.getContext('2d')!;
    ctx.fillStyle = '#fff';
    ctx.fillRect(0, 0, canvas.width, canvas.height);
    ctx.drawImage(img, 0, 0, canvas.width, canvas.height);
    return await canvasToPng(canvas);
  } finally {
    URL.revokeObjectURL(url);
  }
}

export function canvasToPng(canvas: HTMLCanvasElement): Promise<Blob> {
  return new Promise((resolve, reject) =>
    canvas.toBlob((b) => (b ? resolve(b) : reject(new Error('PNG encoding failed'))), 'image/png'),
  );
}

function csvCell(text: string): string {
  // A leading =, +, - or @ would be run as a formula by spreadsheets.
  const safe = /^[=+\-@]/.test(text) && Number.isNaN(Number(text)) ? `'${text}` : text;
  return /[",\n\r]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function matrixCsv(m: MatrixView): string {
  const lines = [[`${m.rowAxis} \\ ${m.colAxis}`, ...m.colLabels].map(csvCell).join(',')];
  for (let i = 0; i < m.rows; i++) {
    const row = [csvCell(m.rowLabels[i])];
    for (let j = 0; j < m.cols; j++) row.push(String(m.get(i, j)));
    lines.push(row.join(','));
  }
  return `${lines.join('\n')}\n`;
}

/** JSON with typed arrays as plain arrays and non-finite numbers as strings. */
export function safeJson(value: unknown): string {
  return JSON.stringify(value, (_k, v) => {
    if (ArrayBuffer.isView(v) && !(v instanceof DataView))
      v = Array.from(v as unknown as ArrayLike<number>);
    if (Array.isArray(v))
      return v.map((x) => (typeof x === 'number' && !Number.isFinite(x) ? String(x) : x));
    if (typeof v === 'number' && !Number.isFinite(v)) return String(v);
    return v;
  });
}

/** Everything behind the page: state, inputs and every intermediate, as a plain object. */
export function stateObject(state: AppState, r: RunResult | null, engine: string): unknown {
  const m = r?.model;
  return {
    format: 'attnscope-state',
    version: 1,
    engine,
    state,
    inputs: m && {
      tokens: m.tokens,
      lengths: m.lengths,
      shape: [m.B, m.T, m.C],
      heads: m.H,
      dK: m.dK,
      dV: m.dV,
      scale: m.scale,
      scaleFactor: m.scaleFactor,
      mask: m.maskSpec,
      embeddings: m.embeddings,
      weights: Object.fromEntries(
        Object.entries(m.weights).map(([k, w]) => [k, { shape: [w.rows, w.cols], data: w.data }]),
      ),
    },
    results: r && {
      positionalEncoding: r.positional,
      x: r.x,
      attention: r.attention,
      block: r.block && { ...r.block, attention: undefined },
    },
  };
}

/**
 * The JSON file of the whole state. Large results make strings of hundreds of
 * megabytes, so the text is written in a worker and the page stays responsive.
 */
export function stateJsonBlob(state: AppState, r: RunResult | null, engine: string): Promise<Blob> {
  const worker = new Worker(new URL('./export-worker.ts', import.meta.url), { type: 'module' });
  return new Promise<Blob>((resolve, reject) => {
    worker.onmessage = (e: MessageEvent<Blob>) => {
      worker.terminate();
      resolve(e.data);
    };
    worker.onerror = (e) => {
      worker.terminate();
      reject(new Error(e.message || 'export failed'));
    };
    worker.postMessage(stateObject(state, r, engine));
  });
}
