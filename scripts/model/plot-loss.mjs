// Draws attnscope_train's loss CSV as an SVG: the training loss (mean over
// each logging interval), the held-out loss and the bigram baseline.
//
// Usage: node plot-loss.mjs <loss.csv> <bigram.json> <loss.svg>
import { readFileSync, writeFileSync } from 'node:fs';

const [csvPath, bigramPath, output] = process.argv.slice(2);
if (!csvPath || !bigramPath || !output) {
  console.error('usage: node plot-loss.mjs <loss.csv> <bigram.json> <loss.svg>');
  process.exit(2);
}
const [head, ...lines] = readFileSync(csvPath, 'utf8').trim().split('\n');
const columns = head.split(',');
const rows = lines.map((line) =>
  Object.fromEntries(line.split(',').map((v, i) => [columns[i], Number(v)])),
);
if (rows.length === 0) throw new Error(`plot-loss: ${csvPath} has no rows`);
const { bigramLoss } = JSON.parse(readFileSync(bigramPath, 'utf8'));

const width = 640;
const height = 360;
const margin = { left: 56, right: 16, top: 16, bottom: 44 };
const maxStep = rows.at(-1).step;
const losses = rows.flatMap((r) => [r.train_loss, r.heldout_loss]).concat(bigramLoss);
const low = Math.floor(Math.min(...losses) * 2) / 2;
const high = Math.ceil(Math.max(...losses) * 2) / 2;
const x = (step) => margin.left + (step / maxStep) * (width - margin.left - margin.right);
const y = (loss) =>
  margin.top + ((high - loss) / (high - low)) * (height - margin.top - margin.bottom);
const path = (key) =>
  rows.map((r, i) => `${i ? 'L' : 'M'}${x(r.step).toFixed(1)},${y(r[key]).toFixed(1)}`).join(' ');

const ticks = [];
for (let v = low; v <= high + 1e-9; v += 0.5) {
  ticks.push(
    `<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>` +
      `<text x="${margin.left - 6}" y="${y(v) + 4}" text-anchor="end">${v.toFixed(1)}</text>`,
  );
}
for (let i = 0; i <= 5; i++) {
  const step = Math.round((maxStep * i) / 5);
  ticks.push(
    `<text x="${x(step)}" y="${height - margin.bottom + 16}" text-anchor="middle">${step}</text>`,
  );
}
const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">
<rect width="100%" height="100%" fill="#fff"/>
${ticks.join('\n')}
<text x="${(margin.left + width - margin.right) / 2}" y="${height - 8}" text-anchor="middle">training step</text>
<text transform="translate(14 ${(margin.top + height - margin.bottom) / 2}) rotate(-90)" text-anchor="middle">cross-entropy (nats per token)</text>
<line x1="${margin.left}" x2="${width - margin.right}" y1="${y(bigramLoss)}" y2="${y(bigramLoss)}" stroke="#888" stroke-dasharray="6 4"/>
<path d="${path('train_loss')}" fill="none" stroke="#1f77b4" stroke-width="2"/>
<path d="${path('heldout_loss')}" fill="none" stroke="#d62728" stroke-width="2"/>
<g transform="translate(${width - margin.right - 190} ${margin.top + 8})">
<line x1="0" x2="24" y1="0" y2="0" stroke="#1f77b4" stroke-width="2"/><text x="30" y="4">training</text>
<line x1="0" x2="24" y1="18" y2="18" stroke="#d62728" stroke-width="2"/><text x="30" y="22">held out</text>
<line x1="0" x2="24" y1="36" y2="36" stroke="#888" stroke-dasharray="6 4"/><text x="30" y="40">bigram baseline (${bigramLoss.toFixed(2)})</text>
</g>
</svg>
`;
writeFileSync(output, svg);
console.log(`plot-loss: wrote ${output}`);
