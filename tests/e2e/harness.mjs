// Shared set-up for the site's end-to-end tests: a static server for web/app/dist
// (vite preview, started directly so its pid can be killed) and headless Chromium.
import { after, before } from 'node:test';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

export const repo = join(dirname(fileURLToPath(import.meta.url)), '../..');
export const screenshots = join(repo, 'tests/e2e/screenshots');
/**
 * The page opens on the KJV model; a test of the seeded toy asks for it by the link's
 * model key. Every test names the model it wants: this, '' (the default), or a #s= link
 * (whose state names its model; one without a model is the toy's).
 */
export const kToy = '#model=toy';
mkdirSync(screenshots, { recursive: true });

function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

export async function startServer() {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [
      join(repo, 'node_modules/vite/bin/vite.js'),
      'preview',
      '--config',
      join(repo, 'web/app/vite.config.ts'),
      '--strictPort',
      '--port',
      String(port),
      '--host',
      '127.0.0.1',
    ],
    { cwd: repo, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const url = `http://127.0.0.1:${port}/`;
  for (let i = 0; i < 100; i++) {
    try {
      const r = await fetch(url);
      if (r.ok) return { url, stop: () => child.kill('SIGTERM') };
    } catch {}
    if (child.exitCode !== null) break;
    await new Promise((r) => setTimeout(r, 100));
  }
  child.kill('SIGTERM');
  throw new Error(`vite preview did not start: ${out}`);
}

export async function launch() {
  const dir = mkdtempSync(join(tmpdir(), 'attnscope-e2e-'));
  const context = await chromium.launchPersistentContext(dir, {
    executablePath: '/usr/bin/chromium',
    headless: true,
    acceptDownloads: true,
    viewport: { width: 1440, height: 1000 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  return {
    context,
    close: async () => {
      await context.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** Collects console errors, page errors, failed requests and dialogs; any of them fails a test. */
export function watch(page) {
  const problems = [];
  page.on('console', (m) => {
    if (m.type() === 'error') problems.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  page.on('requestfailed', (r) =>
    problems.push(`requestfailed: ${r.url()} ${r.failure()?.errorText}`),
  );
  page.on('response', (r) => {
    if (r.status() >= 400) problems.push(`http ${r.status()}: ${r.url()}`);
  });
  page.on('dialog', (d) => {
    problems.push(`dialog: ${d.message()}`);
    void d.dismiss();
  });
  // No network at run time: every request stays on the local server (or is a data:/blob: URL).
  page.on('request', (r) => {
    const url = r.url();
    if (!/^(data:|blob:|http:\/\/127\.0\.0\.1:\d+\/)/.test(url))
      problems.push(`remote request: ${url}`);
  });
  return problems;
}

/** Waits until the page has finished a computation newer than `after`. */
export async function waitReady(page, after = 0) {
  await page.waitForFunction(
    (n) =>
      Number(document.body.dataset.ready ?? 0) > n &&
      document.getElementById('status')?.dataset.busy === '0',
    after,
    { timeout: 60_000 },
  );
  return Number(await page.evaluate(() => document.body.dataset.ready));
}

/** A heatmap canvas's cells in CSS px: { left, top, cell } (the page writes them on the canvas). */
export async function heatmapCells(page, selector = '#view canvas.heatmap') {
  const [left, top, cell] = (await page.getAttribute(selector, 'data-cells'))
    .split(' ')
    .map(Number);
  return { left, top, cell };
}

/**
 * Unfolds the view's data table (if it is folded) and waits for its rows: the table is
 * rendered on the details element's toggle event, which fires after the click returns.
 */
export async function openDataTable(page) {
  if (!(await page.$('#view details.data-table[open]')))
    await page.click('#view details.data-table summary');
  await page.waitForSelector('#view details.data-table[open] table tbody tr');
}

/**
 * Unfolds the input bar's "More settings" (scaling, shapes, block, weights, editor). A page on
 * a GPT-2-architecture model (the KJV model a damaged link falls back to) has none to unfold.
 */
export async function showSettings(page) {
  if ((await page.evaluate(() => document.body.dataset.model)) === 'gpt2') return;
  if ((await page.getAttribute('#more-settings', 'aria-expanded')) !== 'true')
    await page.click('#more-settings');
}

/**
 * Starts the built site's server and a browser before a test file's tests and
 * stops both after them. The handles are filled in once `before` has run.
 */
export function useSite() {
  const site = { server: undefined, browser: undefined };
  before(async () => {
    site.server = await startServer();
    site.browser = await launch();
  });
  after(async () => {
    await site.browser?.close();
    site.server?.stop();
  });
  return site;
}

/**
 * A screenshot of the whole page. The panels below the fold are skipped by
 * `content-visibility: auto` until scrolled to, and a capture beyond the viewport
 * does not scroll: they are shown for the capture as a reader scrolling down sees them.
 */
export async function fullPageScreenshot(page, path) {
  const panels = ['walk', 'notes', 'checks', 'verified', 'share'];
  await page.evaluate((ids) => {
    for (const id of ids)
      document.getElementById(id)?.style.setProperty('content-visibility', 'visible');
  }, panels);
  await page.evaluate(
    () => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))),
  );
  await page.screenshot({ path, fullPage: true });
  await page.evaluate((ids) => {
    for (const id of ids) document.getElementById(id)?.style.removeProperty('content-visibility');
  }, panels);
}
