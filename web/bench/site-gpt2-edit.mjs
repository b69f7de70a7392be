// Times the demo site's response to a token edit with a GPT-2-small-shaped model
// loaded (12 layers, 12 heads, C = 768, V = 50 257, random weights written here to a
// temporary file, deleted after), in headless Chromium. The site is served as
// tests/e2e/harness.mjs serves it (vite preview, cross-origin isolated), so the page's
// engines run their threaded build. The model is loaded through the file chooser, a
// 64-token text is typed, then the edits are timed:
//   appended   a token added at the end (63 → 64 tokens; the 63 are set again, untimed, before each)
//   middle     the token at position 32 of 64 changed
//   start      the token at position 0 of 64 changed
// (those three on the page's first tab, the heatmap), and the middle edit again with the Model
// view (every layer × head) shown.
// "Updated" is what web/bench/site-bench.mjs reads: the site's performance.measure
// 'attnscope:update' (the run's start → every view drawn); beside it compute and render,
// the frame that shows the result (to screen, painted), and edit → update end / painted
// (which include the text box's input debounce). The site's GPT-2 run also measures
//   'attnscope:gpt2:forward'  the GPT-2 worker's call as the page sees it; detail.worker: its
//                             time in the worker, of which detail.modelForward: model.forward
//                             and detail.layer: the selected layer's traced selfAttention
// Each edit waits for the page to settle first (the last run's check against the
// double-precision reference done). Per edit the CPU time of every Chromium process is read from /proc (utime + stime): CPU
// above wall means both cores worked; the load average is printed per case, since others
// may share the machine.
//
//   node web/bench/site-gpt2-edit.mjs [--edits=15] [--file=model.safetensors] [--out=dir]
//        [--cases=appended,middle,start,model] [--verbose]   (some cases only; print every edit)
//
// Needs the built site (npm run build && npm run build:site → web/app/dist/) and Chromium
// (/usr/bin/chromium). Writing the file takes about 500 MB of disk in the temp directory.
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { gpt2Tokenizer } from 'attnscope/tokenizer';
import { launch, repo, startServer } from '../../tests/e2e/harness.mjs';
import { kGpt2Small, writeRandomGpt2 } from './gpt2-random-file.mjs';
import { timingSummary } from './quartiles.mjs';
import { applyTextTimed } from './site-edit-timing.mjs';

const args = Object.fromEntries(
  process.argv.slice(2).map((a) => {
    const [k, v] = a.replace(/^--/, '').split('=');
    return [k, v ?? true];
  }),
);
const edits = Number(args.edits ?? 15);
const outDir = resolve(args.out ?? new URL('./results', import.meta.url).pathname);
if (!existsSync(join(repo, 'web/app/dist/index.html')) || !existsSync('/usr/bin/chromium')) {
  console.log(
    'site-gpt2-edit: needs the built site (npm run build && npm run build:site) and /usr/bin/chromium. Nothing measured.',
  );
  process.exit(0);
}

// 64 tokens of one word each (each word with its leading space is one GPT-2 token).
const kWords = ['the', 'cat', 'sat', 'on', 'a', 'warm', 'mat', 'today'];
const words = (n) => Array.from({ length: n }, (_, i) => kWords[i % kWords.length]);
const textOf = (list) => list.join(' ');
const base = words(64);
const count = (text) => gpt2Tokenizer.encode(text).length;
if (count(textOf(base)) !== 64 || count(textOf(base.slice(0, 63))) !== 63) {
  console.error('site-gpt2-edit: the text is not 64 tokens; change kWords');
  process.exit(1);
}
const swap = (list, at, i) => list.map((w, k) => (k === at ? (i % 2 ? 'dog' : 'rug') : w));
for (const i of [0, 1]) {
  if (
    count(textOf(swap(base, 0, i))) !== 64 ||
    count(textOf([...base.slice(0, 63), 'rug'])) !== 64
  ) {
    console.error('site-gpt2-edit: an edit does not keep 64 tokens; change the words');
    process.exit(1);
  }
}
const cases = [
  {
    id: 'appended',
    label: 'appended (63 → 64)',
    before: () => textOf(base.slice(0, 63)),
    edit: (i) => textOf([...base.slice(0, 63), i % 2 ? 'dog' : 'rug']),
  },
  { id: 'middle', label: 'middle (position 32 of 64)', edit: (i) => textOf(swap(base, 32, i)) },
  { id: 'start', label: 'start (position 0 of 64)', edit: (i) => textOf(swap(base, 0, i)) },
  // The Model view draws all 12 × 12 maps on every update.
  {
    id: 'model',
    label: 'middle, Model view shown',
    tab: '#tab-model',
    edit: (i) => textOf(swap(base, 32, i)),
  },
];

/** CPU milliseconds of every process whose command is Chromium's (clock ticks of 10 ms). */
function chromiumCpu() {
  let ticks = 0;
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (!/chrom/i.test(name)) continue;
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]); // utime, stime
    } catch {} // the process ended meanwhile
  }
  return ticks * 10;
}
const loadAverage = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');

const fmt = (s) => (s ? `${s.median.toFixed(0)} / ${s.p90.toFixed(0)}` : '—');

const dir = mkdtempSync(join(tmpdir(), 'attnscope-site-gpt2-'));
let file = args.file;
if (!file) {
  file = join(dir, 'gpt2-small-random.safetensors');
  const t0 = performance.now();
  const bytes = writeRandomGpt2(file, kGpt2Small);
  console.log(
    `wrote a GPT-2-small-shaped file (${(bytes / 1e6).toFixed(0)} MB) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
}

const server = await startServer();
const browser = await launch();
let exitCode = 0;
try {
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto(`${server.url}#model=toy`);
  await page.waitForFunction(() => Number(document.body.dataset.ready ?? 0) > 0, null, {
    timeout: 60_000,
  });
  const ready = () => page.evaluate(() => Number(document.body.dataset.ready ?? 0));
  const settled = (after) =>
    page.waitForFunction(
      (n) =>
        Number(document.body.dataset.ready ?? 0) > n &&
        document.getElementById('status')?.dataset.busy === '0',
      after,
      { timeout: 600_000 },
    );
  await page.selectOption('#model-source', 'gpt2');
  let before = await ready();
  const loadStart = Date.now();
  await page.setInputFiles('#gpt2-file', file);
  await page.waitForSelector('#gpt2-loaded', { state: 'attached', timeout: 600_000 });
  await settled(before);
  console.log(
    `loaded through the file chooser in ${((Date.now() - loadStart) / 1000).toFixed(1)} s`,
  );
  const where = await page.evaluate(() => ({
    isolated: self.crossOriginIsolated,
    cores: navigator.hardwareConcurrency,
    engine: document.querySelector('#engine-info')?.textContent?.trim() ?? '',
  }));

  const applyText = (text) => applyTextTimed(page, text, 120_000);
  const timedEdit = async (text) => {
    // The page settled, as a visitor's next edit finds it: the last run's check against the
    // double-precision reference (in its own worker, after the views) is done.
    await page.waitForFunction(
      () => !/Checking against/.test(document.getElementById('verified-body')?.textContent ?? ''),
      null,
      { timeout: 120_000 },
    );
    const cpu0 = chromiumCpu();
    const r = await applyText(text);
    if (r.timeout) throw new Error(`no 'attnscope:update' within 120 s of an edit`);
    // Chromium's CPU from the edit to two frames after the update, over the same span's wall time.
    return { ...r, cpu: chromiumCpu() - cpu0 };
  };

  await timedEdit(textOf(base)); // the 64 tokens, once, untimed
  const results = [];
  let samplesEngine = '';
  const only = args.cases ? String(args.cases).split(',') : null;
  for (const c of cases.filter((c) => !only || only.includes(c.id))) {
    if (c.tab) await page.click(c.tab);
    const loadBefore = loadAverage();
    const samples = [];
    for (let i = 0; i < edits; i++) {
      if (c.before) await timedEdit(c.before());
      samples.push(await timedEdit(c.edit(i)));
      if (args.verbose)
        console.log(
          JSON.stringify(samples.at(-1), (k, v) => (typeof v === 'number' ? Math.round(v) : v)),
        );
    }
    samplesEngine = samples.at(-1).gpt2Engine ?? samplesEngine;
    const row = { case: c.label, loadBefore, loadAfter: loadAverage() };
    for (const key of Object.keys(samples[0])) {
      const xs = samples.map((s) => s[key]).filter((x) => typeof x === 'number');
      if (xs.length) row[key] = timingSummary(xs);
    }
    results.push(row);
    console.log(`${c.label}: done (load average ${row.loadBefore} → ${row.loadAfter})`);
  }

  console.log(
    `\nsite: ${server.url} (headless Chromium, crossOriginIsolated=${where.isolated}, ${where.cores} hardware threads)`,
  );
  console.log(where.engine);
  const gpt2Engine = results.length ? samplesEngine : '';
  if (gpt2Engine) console.log(`The GPT-2 worker's engine: ${gpt2Engine}.`);
  console.log(
    `${args.file ? `the model in ${args.file}` : 'GPT-2-small-shaped model'}, T = 64, ${edits} edits per case; milliseconds, median / p90 (interpolated); the update's largest in its own column`,
  );
  const columns = [
    ['update', 'update'],
    ['update', 'update max', (x) => x.max.toFixed(0)],
    ['compute', 'compute'],
    ['render', 'render'],
    ['toScreen', 'to screen'],
    ['editToUpdateEnd', 'edit→update end'],
    ['gpt2Call', 'GPT-2 call'],
    ['gpt2Worker', 'in worker'],
    ['modelForward', 'model.forward'],
    ['layer', 'layer again'],
    ['editToPaint', 'edit→painted'],
    ['cpu', 'Chromium CPU'],
  ];
  const width = Math.max(...results.map((r) => r.case.length)) + 1;
  console.log(`${'case'.padEnd(width)}${columns.map(([, h]) => h.padEnd(16)).join('')}`);
  for (const r of results) {
    console.log(
      `${r.case.padEnd(width)}${columns.map(([k, , show = fmt]) => (r[k] ? show(r[k]) : '—').padEnd(16)).join('')}`,
    );
  }
  console.log(
    "update: the run's start → every view drawn (the 250 ms target); compute: → result back from the GPT-2 worker;",
  );
  console.log(
    'GPT-2 call: the GPT-2 worker as the page sees it; in it model.forward, and the selected layer again (selfAttention);',
  );
  console.log(
    'Chromium CPU: all its processes over edit→painted (which includes the input debounce): CPU above it = both cores',
  );
  mkdirSync(outDir, { recursive: true });
  const out = resolve(outDir, 'site-gpt2-edit.json');
  writeFileSync(
    out,
    JSON.stringify(
      { date: new Date().toISOString(), ...where, edits, results, pageErrors: errors },
      null,
      2,
    ) + '\n',
  );
  console.log(`wrote ${out}`);
  if (errors.length) {
    console.log(`page errors: ${errors.join(' | ')}`);
    exitCode = 1;
  }
} catch (e) {
  console.error(`site-gpt2-edit: ${e?.stack ?? e}`);
  exitCode = 1;
} finally {
  await browser.close();
  server.stop();
  rmSync(dir, { recursive: true, force: true });
}
process.exit(exitCode);
