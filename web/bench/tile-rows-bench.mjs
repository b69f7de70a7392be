// The register tile's height (engine.matmulTileRows: 4 or 6 rows) on the site's start-edit
// forward with a GPT-2-small-shaped model (random weights written here to a temporary file), in
// Node and in a Chromium dedicated worker on a cross-origin isolated page, as the site runs it.
// Per engine: the height the engine measured when the model loaded, then the forward's median at
// each height set by hand, alternating (tile-rows-run.mjs). docs/performance/journal.md ("The
// register tile's height, measured by the engine") says why both engines are timed.
//
//   node --experimental-wasm-relaxed-simd web/bench/tile-rows-bench.mjs [--threads=1,2]
//        [--edits=8] [--in=node,chromium] [--file=model.safetensors]
//
// Needs dist/ (npm run build); Chromium (/usr/bin/chromium, or CHROMIUM=path) for its part.
import { createServer } from 'node:http';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';

import { kGpt2Small, writeRandomGpt2 } from './gpt2-random-file.mjs';
import { runTileRows } from './tile-rows-run.mjs';

const repo = resolve(new URL('../..', import.meta.url).pathname);
const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const threadCounts = String(args.threads ?? '1,2')
  .split(',')
  .map(Number);
const edits = Number(args.edits ?? 8);
const where = String(args.in ?? 'node,chromium').split(',');
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
if (!existsSync(join(repo, 'dist/node.js'))) {
  console.log('tile-rows-bench: dist/ not found; build the package first (npm run build).');
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'attnscope-tile-rows-'));
const file = args.file ?? join(dir, 'gpt2-small-random.safetensors');
if (!args.file) writeRandomGpt2(file, kGpt2Small);

const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
function report(runtime, r) {
  const [four, six] = [median(r.ms[4]), median(r.ms[6])];
  console.log(
    `${runtime.padEnd(22)} ${`${r.simdArch}, ${r.threads} thread${r.threads > 1 ? 's' : ''}`.padEnd(30)}` +
      ` measured ${r.measured} rows   4 rows ${four.toFixed(1)} ms   6 rows ${six.toFixed(1)} ms` +
      `   4 / 6 ${(four / six).toFixed(3)}`,
  );
}

console.log(`start-edit forward, T = 64, ${edits} edits per height, median`);
if (where.includes('node')) {
  const { createAttnScope } = await import(join(repo, 'dist/node.js'));
  const bytes = readFileSync(file);
  for (const threads of threadCounts) {
    report(
      `Node ${process.versions.node}`,
      await runTileRows(createAttnScope, bytes, { threads, edits }),
    );
  }
}

if (where.includes('chromium') && !existsSync(chromium)) {
  console.log(`tile-rows-bench: ${chromium} not found (set CHROMIUM=path); Chromium not measured.`);
} else if (where.includes('chromium')) {
  const kTypes = {
    '.js': 'text/javascript',
    '.mjs': 'text/javascript',
    '.wasm': 'application/wasm',
  };
  const headers = {
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-embedder-policy': 'require-corp',
  };
  const server = createServer((req, res) => {
    const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).slice(1);
    if (path === '') {
      res.writeHead(200, { ...headers, 'content-type': 'text/html' }).end('<!doctype html>');
    } else if (path === 'model') {
      res.writeHead(200, { ...headers, 'content-type': 'application/octet-stream' });
      createReadStream(file).pipe(res);
    } else if (
      (path.startsWith('dist/') || path.startsWith('web/bench/tile-rows-')) &&
      existsSync(join(repo, path))
    ) {
      res.writeHead(200, { ...headers, 'content-type': kTypes[extname(path)] ?? 'text/plain' });
      createReadStream(join(repo, path)).pipe(res);
    } else {
      res.writeHead(404, headers).end();
    }
  });
  await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
  const { chromium: playwright } = await import('playwright-core');
  const profile = mkdtempSync(join(tmpdir(), 'attnscope-tile-rows-chromium-'));
  const context = await playwright.launchPersistentContext(profile, {
    executablePath: chromium,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const tab = await context.newPage();
    await tab.goto(`http://127.0.0.1:${server.address().port}/`);
    const browser = await tab.evaluate(() => navigator.userAgent.match(/Chrome\/\d+/)?.[0]);
    for (const threads of threadCounts) {
      const result = await tab.evaluate(
        (options) =>
          new Promise((resolve, reject) => {
            const worker = new Worker('/web/bench/tile-rows-worker.mjs', { type: 'module' });
            worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
            worker.onmessage = ({ data }) => {
              worker.terminate();
              if (data.error) reject(new Error(data.error));
              else resolve(data.result);
            };
            worker.postMessage({ options, packageUrl: '/dist/browser.js', modelUrl: '/model' });
          }),
        { threads, edits },
      );
      report(`${browser}, worker`, result);
    }
  } finally {
    await context.close();
    rmSync(profile, { recursive: true, force: true });
    server.close();
  }
}
rmSync(dir, { recursive: true, force: true });
process.exit(0);
