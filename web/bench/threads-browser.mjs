// The threaded comparison of threads-bench.mjs, run in headless Chromium: the
// page is served cross-origin isolated (COOP/COEP), so attnscope loads its
// threaded build and onnxruntime-web its threads, as they would on a site that
// sends those headers. Both run in a dedicated worker (threads-worker.mjs), as
// the site runs attnscope, or with --in=page on the page's main thread, where
// a thread waiting for another cannot sleep (Atomics.wait is not allowed
// there) and spins instead.
//
//   node web/bench/threads-browser.mjs [--in=worker|page] [--threads=N] [--sizes=256,1024,2048] [--rounds=7] [--scaling-t=1024] [--quick] [--out=dir]
//
// Needs dist/ (npm run build) and Chromium (/usr/bin/chromium, or CHROMIUM=path).
// Writes <out>/threads-chromium.json (default web/bench/results/).
import { createServer } from 'node:http';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import { extname, join, normalize, resolve } from 'node:path';

import { measureHostPeak, threadsBenchOptions, writeThreadsRecord } from './threads-options.mjs';

const repo = resolve(new URL('../..', import.meta.url).pathname);
const argv = process.argv.slice(2);
const options = {
  ...threadsBenchOptions(
    argv.filter((a) => !a.startsWith('--in=')),
    os.availableParallelism(),
  ),
  in: argv.find((a) => a.startsWith('--in='))?.slice(5) ?? 'worker',
};
if (!['worker', 'page'].includes(options.in))
  throw new Error(`--in must be worker or page, got ${options.in}`);
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
// The bare specifiers the comparison's modules import (gaussian.mjs's).
const kImports = { 'attnscope/reference': '/dist/reference.js' };
const page = '<!doctype html><meta charset="utf-8"><title>attnscope threads</title>';
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
  let body = readFileSync(file);
  if (path.startsWith('web/bench/')) {
    // A worker has no import map: its modules get the map's addresses written in.
    body = String(body).replace(/from '([^']+)'/g, (m, spec) =>
      spec in kImports ? `from '${kImports[spec]}'` : m,
    );
  }
  res.writeHead(200, { ...headers, 'content-type': type }).end(body);
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}/`;

// Measured before Chromium starts, so that nothing else runs beside it.
const peak = await measureHostPeak();
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
    if (options.in === 'page') {
      const { runInBrowser } = await import('/web/bench/threads-page.mjs');
      return runInBrowser(options, console.log);
    }
    const worker = new Worker('/web/bench/threads-worker.mjs', { type: 'module' });
    try {
      return await new Promise((resolve, reject) => {
        worker.onerror = (e) => reject(new Error(`worker: ${e.message}`));
        worker.onmessage = ({ data }) => {
          if (data.log !== undefined) console.log(data.log);
          else if (data.error !== undefined) reject(new Error(data.error));
          else resolve(data.result);
        };
        worker.postMessage(options);
      });
    } finally {
      worker.terminate();
    }
  }, options);
  if (errors.length) throw new Error(`page errors: ${errors.join('; ')}`);
  writeThreadsRecord({
    defaultDir: new URL('./results', import.meta.url).pathname,
    name: 'threads-chromium.json',
    runtime: `${browser}, ${options.in === 'page' ? 'page main thread' : 'dedicated worker'}`,
    options,
    peak,
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
