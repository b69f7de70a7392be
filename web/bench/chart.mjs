// SVG chart of the attention benchmark: GFLOP/s against sequence length T
// (log₂ axis), one line per runtime, one panel per mask, the measured wasm
// SIMD peaks as dashed lines. Plain string building, no dependencies.

// One colour per runtime: the benchmark draws up to nine series.
const kColors = [
  '#1b6ac9',
  '#d1495b',
  '#edae49',
  '#00798c',
  '#66a182',
  '#8d6a9f',
  '#2e4057',
  '#c06c84',
  '#8a5a00',
  '#7f7f7f',
];
const kPanelWidth = 420;
const kPanelHeight = 300;
const kMargin = { top: 40, right: 16, bottom: 46, left: 56 };

const escape = (s) => String(s).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

function niceMax(v) {
  const p = 10 ** Math.floor(Math.log10(v));
  for (const m of [1, 1.2, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10]) if (m * p >= v) return m * p;
  return 10 * p;
}

function panel({ title, series, sizes, yMax, peaks, x0 }) {
  const w = kPanelWidth - kMargin.left - kMargin.right;
  const h = kPanelHeight - kMargin.top - kMargin.bottom;
  const lx = (T) => Math.log2(T);
  const [xa, xb] = [lx(sizes[0]), lx(sizes[sizes.length - 1])];
  const sx = (T) => kMargin.left + ((lx(T) - xa) / (xb - xa || 1)) * w;
  const sy = (g) => kMargin.top + h - (g / yMax) * h;
  const out = [`<g transform="translate(${x0},0)">`];
  out.push(
    `<text x="${kMargin.left + w / 2}" y="22" text-anchor="middle" font-weight="bold">${escape(title)}</text>`,
  );
  for (let i = 0; i <= 5; ++i) {
    const g = (yMax * i) / 5;
    out.push(
      `<line x1="${kMargin.left}" x2="${kMargin.left + w}" y1="${sy(g)}" y2="${sy(g)}" stroke="#e4e4e4"/>`,
      `<text x="${kMargin.left - 6}" y="${sy(g) + 4}" text-anchor="end">${+g.toFixed(1)}</text>`,
    );
  }
  for (const T of sizes) {
    out.push(`<text x="${sx(T)}" y="${kMargin.top + h + 16}" text-anchor="middle">${T}</text>`);
  }
  out.push(
    `<text x="${kMargin.left + w / 2}" y="${kPanelHeight - 8}" text-anchor="middle">sequence length T</text>`,
    `<text transform="translate(14,${kMargin.top + h / 2}) rotate(-90)" text-anchor="middle">GFLOP/s (4·H·T²·d / time)</text>`,
    `<rect x="${kMargin.left}" y="${kMargin.top}" width="${w}" height="${h}" fill="none" stroke="#999"/>`,
  );
  for (const { gflops, label } of peaks) {
    out.push(
      `<line x1="${kMargin.left}" x2="${kMargin.left + w}" y1="${sy(gflops)}" y2="${sy(gflops)}" stroke="#555" stroke-dasharray="5,4"/>`,
      `<text x="${kMargin.left + 4}" y="${sy(gflops) - 4}" fill="#555">${escape(label)} ${gflops.toFixed(1)}</text>`,
    );
  }
  for (const s of series) {
    const pts = s.points.filter((p) => Number.isFinite(p.gflops));
    if (!pts.length) continue;
    out.push(
      `<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${pts.map((p) => `${sx(p.T).toFixed(1)},${sy(p.gflops).toFixed(1)}`).join(' ')}"/>`,
    );
    for (const p of pts)
      out.push(
        `<circle cx="${sx(p.T).toFixed(1)}" cy="${sy(p.gflops).toFixed(1)}" r="3" fill="${s.color}"/>`,
      );
  }
  out.push('</g>');
  return out.join('\n');
}

/**
 * @param {{ runtime: string, T: number, mask: string, gflops?: number }[]} rows
 * @param {{ peaks?: { gflops: number, label: string }[], subtitle?: string }} options
 *   peaks: dashed lines (the machine's measured wasm SIMD peaks)
 * @returns {string} a standalone SVG document
 */
export function attentionChart(rows, { peaks = [], subtitle = '' } = {}) {
  const runtimes = [...new Set(rows.map((r) => r.runtime))];
  const sizes = [...new Set(rows.map((r) => r.T))].sort((a, b) => a - b);
  const finite = rows.map((r) => r.gflops).filter(Number.isFinite);
  const yMax = niceMax(Math.max(...peaks.map((p) => p.gflops), ...finite, 1) * 1.05);
  const legendHeight = 20 * Math.ceil(runtimes.length / 2) + 10;
  const width = 2 * kPanelWidth;
  const height = kPanelHeight + legendHeight + 24;
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="11">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="14" text-anchor="middle" fill="#444">${escape(subtitle)}</text>`,
    `<g transform="translate(0,16)">`,
  ];
  const colorOf = (r) => kColors[runtimes.indexOf(r) % kColors.length];
  [
    ['none', 'no mask'],
    ['causal', 'causal mask (flops counted as if unmasked)'],
  ].forEach(([mask, title], i) => {
    const series = runtimes.map((runtime) => ({
      color: colorOf(runtime),
      points: rows
        .filter((r) => r.runtime === runtime && r.mask === mask)
        .sort((a, b) => a.T - b.T),
    }));
    parts.push(panel({ title, series, sizes, yMax, peaks, x0: i * kPanelWidth }));
  });
  parts.push('</g>');
  runtimes.forEach((runtime, i) => {
    const x = 20 + (i % 2) * kPanelWidth;
    const y = kPanelHeight + 34 + 20 * Math.floor(i / 2);
    parts.push(
      `<line x1="${x}" x2="${x + 22}" y1="${y}" y2="${y}" stroke="${colorOf(runtime)}" stroke-width="3"/>`,
      `<text x="${x + 28}" y="${y + 4}">${escape(runtime)}</text>`,
    );
  });
  parts.push('</svg>');
  return parts.join('\n') + '\n';
}
