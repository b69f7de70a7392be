// The threaded comparison of threads-bench.mjs, run in headless Chromium: the
// page is served cross-origin isolated (COOP/COEP), so attnscope loads its
// threaded build and onnxruntime-web its threads, as they would on a site that
// sends those headers. Both run on the page's main thread, which is where the
// comparison's code (threads-run.mjs) waits for them.
//
//   node web/bench/threads-browser.mjs [--threads=N] [--sizes=256,1024,2048] [--rounds=7] [--scaling-t=1024] [--quick] [--out=dir]
//
// Needs dist/ (npm run build) and Chromium (/usr/bin/chromium, or CHROMIUM=path).
// Writes <out>/threads-chromium.json (default web/bench/results/).
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';

import { threadsBenchOptions, writeThreadsRecord } from './threads-options.mjs';

const repo = resolve(new URL('../..', import.meta.url).pathname);
const options = threadsBenchOptions(process.argv.slice(2), os.availableParallelism());
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';
for (const [path, hint] of [
  [join(repo, 'dist/attnscope-threads.wasm'), 'build the package first (npm run build)'],
  [chromium, 'set CHROMIUM=path'],
]) {
  if (!existsSync(path)) {
    console.log(`threads-browser: ${path} not found; ${hint}. Nothing measured.`);
    process.exit(0);
  }
}

// Only what the page needs is served: the package, onnxruntime-web's files and
// the comparison's modules.
const served = ['dist/', 'node_modules/onnxruntime-web/dist/', 'web/bench/'];
const kTypes = {
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.wasm': 'application/wasm',
  '.html': 'text/html',
};
const page = `<!doctype html><meta charset="utf-8"><title>attnscope threads</title>
<script type="importmap">${JSON.stringify({
  imports: {
    attnscope: '/dist/browser.js',
    'attnscope/reference': '/dist/reference.js',
    'onnxruntime-web': '/node_modules/onnxruntime-web/dist/ort.min.mjs',
  },
})}</script>`;
const server = createServer((req, res) => {
  const headers = {
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-embedder-policy': 'require-corp',
  };
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).slice(1);
  if (path === '') {
    res.writeHead(200, { ...headers, 'content-type': 'text/html' }).end(page);
    return;
  }
  const file = join(repo, path);
  if (!served.some((dir) => path.startsWith(dir)) || !file.startsWith(repo) || !existsSync(file)) {
    res.writeHead(404, headers).end();
    return;
  }
  const type = kTypes[extname(file)] ?? 'application/octet-stream';
  res.writeHead(200, { ...headers, 'content-type': type }).end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}/`;

const { chromium: playwright } = await import('playwright-core');
const profile = mkdtempSync(join(os.tmpdir(), 'attnscope-threads-browser-'));
const context = await playwright.launchPersistentContext(profile, {
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
});
let exitCode = 0;
try {
  const tab = await context.newPage();
  const errors = [];
  tab.on('pageerror', (e) => errors.push(String(e)));
  tab.on('console', (m) => m.type() === 'log' && console.log(m.text()));
  await tab.goto(url);
  const browser = await tab.evaluate(() => navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0]);
  const isolated = await tab.evaluate(() => globalThis.crossOriginIsolated);
  if (!isolated) throw new Error('the page is not cross-origin isolated: threads cannot run');
  const result = await tab.evaluate(async (options) => {
    const ort = await import('onnxruntime-web');
    const { createAttnScope } = await import('attnscope');
    const { runThreadsBench } = await import('/web/bench/threads-run.mjs');
    ort.env.wasm.numThreads = options.threads;
    ort.env.wasm.wasmPaths = '/node_modules/onnxruntime-web/dist/';
    ort.env.logLevel = 'error';
    const engines = new Map();
    const engineWith = async (n) => {
      if (!engines.has(n)) engines.set(n, await createAttnScope({ threads: n, simd: 'simd128' }));
      const engine = engines.get(n);
      if (engine.threads !== n)
        throw new Error(`asked ${n} threads, the engine runs ${engine.threads}`);
      return engine;
    };
    console.log(
      `attnscope threaded vs onnxruntime-web ${ort.env.versions?.web ?? ''} in ${navigator.userAgent.match(/Chrome\/[\d.]+/)?.[0]}, ` +
        `${navigator.hardwareConcurrency} hardware threads`,
    );
    return runThreadsBench({ ort, engineWith, ...options, log: console.log });
  }, options);
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  writeThreadsRecord({
    defaultDir: new URL('./results', import.meta.url).pathname,
    name: 'threads-chromium.json',
    runtime: browser,
    options,
    result,
  });
} catch (e) {
  console.error(`threads-browser: ${e.message ?? e}`);
  exitCode = 1;
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
  server.close();
}
process.exit(exitCode);
