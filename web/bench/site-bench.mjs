// Measures the demo site's response to a token edit in headless Chromium:
// one word of the text is changed, the site recomputes through its worker and
// redraws, and the site's own performance measure reports how long that took.
//
//   node web/bench/site-bench.mjs [--edits=60] [--out=dir] [--site=web/app/dist]
//
// Needs the built site (npm run build && npm run build:site → web/app/dist/)
// and Chromium (/usr/bin/chromium, or CHROMIUM=path). The site emits, per
// recompute-and-redraw:
//   performance.measure('attnscope:update', …)   required: start of the run → views drawn
//   performance.measure('attnscope:compute', …)  optional: start of the run → result back from the worker
//   performance.measure('attnscope:render', …)   optional: result → views drawn
//   performance.measure('attnscope:painted', …)  optional: start of the run → the frame that shows
//                                                the result laid out and painted
//   performance.measure('attnscope:frame', …)    optional: that frame alone (its start → painted)
// The work of an update, from the run's start to the result on screen without the
// wait for the next frame, is update + frame ("to screen").
// The script also times, inside the page, the edit (input event) → 'attnscope:update'
// end (which includes the site's input debounce) and → the next painted frame.
import { createServer } from 'node:http';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { extname, join, normalize, resolve } from 'node:path';
import { tmpdir } from 'node:os';
import { timingSummary } from './quartiles.mjs';
import { applyTextTimed } from './site-edit-timing.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const siteDir = resolve(args.site ?? new URL('../app/dist', import.meta.url).pathname);
const outDir = resolve(args.out ?? new URL('./results', import.meta.url).pathname);
const edits = Number(args.edits ?? 60);
const chromium = process.env.CHROMIUM ?? '/usr/bin/chromium';

if (!existsSync(join(siteDir, 'index.html'))) {
  console.log(
    `site-bench: ${siteDir}/index.html not found; build the site first (npm run build && npm run build:site). Nothing measured.`,
  );
  process.exit(0);
}
if (!existsSync(chromium)) {
  console.log(
    `site-bench: Chromium not found at ${chromium} (set CHROMIUM=path). Nothing measured.`,
  );
  process.exit(0);
}

// A static server for web/app/dist: the built site is what users get.
const kTypes = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.mjs': 'text/javascript',
  '.css': 'text/css',
  '.wasm': 'application/wasm',
  '.json': 'application/json',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
};
const server = createServer((req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname)).replace(
    /^(\.\.[/\\])+/,
    '',
  );
  let file = join(siteDir, path);
  if (file.endsWith('/')) file = join(file, 'index.html');
  if (!file.startsWith(siteDir) || !existsSync(file)) {
    res.writeHead(404).end();
    return;
  }
  res.writeHead(200, { 'content-type': kTypes[extname(file)] ?? 'application/octet-stream' });
  res.end(readFileSync(file));
});
await new Promise((ok) => server.listen(0, '127.0.0.1', ok));
const url = `http://127.0.0.1:${server.address().port}/`;

const { chromium: playwright } = await import('playwright-core');
const profile = mkdtempSync(join(tmpdir(), 'attnscope-site-bench-'));
const context = await playwright.launchPersistentContext(profile, {
  executablePath: chromium,
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});

// Two sentences of different lengths; each edit swaps one word back and forth.
const words = (n) =>
  Array.from(
    { length: n },
    (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'warm', 'mat', 'today'][i % 8],
  );
const cases = [
  { label: 'T = 8', tokens: words(8) },
  { label: 'T = 64', tokens: words(64) },
  // The longest pipeline: positional encoding (two engine calls more) and the transformer block.
  { label: 'T = 64, positional encoding + block', tokens: words(64), full: true },
];

const fmt = (x) => (x === undefined || x === null ? '—' : x.toFixed(1));

let exitCode = 0;
const results = [];
try {
  const page = await context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${url}#model=toy`); // the edits measured are the toy's, as in the recorded runs
  await page.waitForSelector('#text', { timeout: 30000 });
  // Which build the page's worker loaded ("… (SIMD: sse2+relaxed_madd)" where
  // Chromium validates relaxed SIMD): the figures belong to that build.
  await page.waitForFunction(
    () => /SIMD:/.test(document.querySelector('#engine-info')?.textContent ?? ''),
    null,
    {
      timeout: 30000,
    },
  );
  const engine = (await page.textContent('#engine-info')).trim();

  const applyText = (text) => applyTextTimed(page, text, 20000);

  // Does the site emit the measure at all? One edit, generous timeout.
  const probe = await applyText(words(8).join(' ') + ' .');
  if (probe.timeout) {
    console.log(
      "site-bench: the site emitted no performance.measure('attnscope:update') within 20 s of an edit; " +
        'see the header of web/bench/site-bench.mjs for the marks it must emit. Nothing measured.',
    );
  } else {
    for (const c of cases) {
      if (c.full) {
        // The two boxes are among the input bar's folded settings.
        if ((await page.getAttribute('#more-settings', 'aria-expanded')) !== 'true')
          await page.click('#more-settings');
        for (const box of ['#positional', '#block']) {
          const settled = page.evaluate(
            () =>
              new Promise((ok) => {
                const n = performance.getEntriesByName('attnscope:update', 'measure').length;
                const poll = () =>
                  performance.getEntriesByName('attnscope:update', 'measure').length > n
                    ? ok()
                    : setTimeout(poll, 5);
                poll();
              }),
          );
          await page.check(box);
          await settled;
        }
      }
      await applyText(c.tokens.join(' ')); // settle on this length first
      const samples = [];
      for (let i = 0; i < edits; ++i) {
        const tokens = [...c.tokens];
        tokens[tokens.length - 1] = i % 2 ? 'mat' : 'rug'; // one token changes per edit
        const r = await applyText(tokens.join(' '));
        if (r.timeout) throw new Error(`no 'attnscope:update' after edit ${i} (${c.label})`);
        samples.push(r);
      }
      const row = { case: c.label, tokens: c.tokens.length };
      for (const key of [
        'update',
        'compute',
        'render',
        'toScreen',
        'painted',
        'editToUpdateEnd',
        'editToPaint',
      ]) {
        const xs = samples.map((s) => s[key]).filter((x) => typeof x === 'number');
        if (xs.length) row[key] = timingSummary(xs);
      }
      results.push(row);
    }
    console.log(
      `site: ${url} (headless Chromium), ${edits} one-token edits per case; milliseconds, median / p90`,
    );
    console.log(engine);
    const width = Math.max(...results.map((r) => r.case.length)) + 1;
    console.log(
      `${'case'.padEnd(width)} update (compute + render)   compute       render        to screen     painted       edit→update end   edit→painted`,
    );
    for (const r of results) {
      const cell = (s) => (s ? `${fmt(s.median)} / ${fmt(s.p90)}` : '—').padEnd(14);
      console.log(
        `${r.case.padEnd(width)} ${cell(r.update).padEnd(27)} ${cell(r.compute)}${cell(r.render)}${cell(r.toScreen)}${cell(r.painted)}${cell(r.editToUpdateEnd).padEnd(18)}${cell(r.editToPaint)}`,
      );
    }
    console.log(
      'update: the edit applied → the views drawn; to screen: update + the frame that shows them (style, layout, paint);',
    );
    console.log(
      'painted: also the wait for that frame; edit→…: also the input debounce of the site',
    );
    mkdirSync(outDir, { recursive: true });
    const file = resolve(outDir, 'site.json');
    writeFileSync(
      file,
      JSON.stringify(
        { date: new Date().toISOString(), url, engine, edits, results, pageErrors: errors },
        null,
        2,
      ) + '\n',
    );
    console.log(`wrote ${file}`);
  }
  if (errors.length) {
    console.log(`page errors: ${errors.join(' | ')}`);
    exitCode = 1;
  }
} catch (e) {
  console.error(`site-bench: ${e?.message ?? e}`);
  exitCode = 1;
} finally {
  await context.close();
  server.close();
  rmSync(profile, { recursive: true, force: true });
}
process.exit(exitCode);
