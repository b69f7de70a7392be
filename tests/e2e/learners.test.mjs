// The site as a learner meets it (issue 19): one colour meaning everywhere, the
// inspected cell kept by links and presets, honest stage texts, exports that are
// complete and well-formed, one keyboard stop for the tokens, no axe-core
// violations, the attention on screen at first sight on a laptop and a phone.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';

import {
  heatmapCells,
  kToy,
  openDataTable,
  screenshots,
  showSettings,
  useSite,
} from './harness.mjs';
import { axeViolations, change, downloadOf, kLaptop, kPhone, openAt } from './learners-helpers.mjs';

const site = useSite();
const open = (hash = kToy, viewport = kLaptop) => openAt(site, hash, viewport);

/** Sign of a colour on the diverging scale: +1 orange (positive), −1 purple (negative), 0 near white. */
const hue = ([r, , b]) => (Math.abs(r - b) < 12 ? 0 : r > b ? 1 : -1);
const rgbOf = (css) => css.match(/\d+/g).slice(0, 3).map(Number);

test('positive and negative have the same colours in the heatmaps and the Vectors bars', async () => {
  const { page, problems } = await open();
  await page.click('button[data-stage="x"]');
  // The stage's build-up over, its colours are final.
  await page.waitForFunction(() => document.getElementById('stage-time').value === '100');
  // X's first row, read from the heatmap canvas at each cell's centre, with its value from the data table.
  const cells = await page.evaluate(
    ({ left, top, cell }) => {
      const canvas = document.querySelector('#view canvas.heatmap');
      const dpr = window.devicePixelRatio || 1;
      const ctx = canvas.getContext('2d');
      const cols = 16;
      // Near a cell's corner: its centre may hold its number.
      return Array.from({ length: cols }, (_, j) =>
        Array.from(
          ctx.getImageData(
            Math.round((left + (j + 0.15) * cell) * dpr),
            Math.round((top + 0.15 * cell) * dpr),
            1,
            1,
          ).data,
        ),
      );
    },
    await heatmapCells(page),
  );
  await openDataTable(page);
  const values = await page.$$eval('#view details.data-table tbody tr:first-child td', (tds) =>
    tds.map((td) => Number(td.title.replace('−', '-'))),
  );
  assert.equal(values.length, 16, 'X has 16 columns in the data table');
  let checked = 0;
  values.forEach((v, j) => {
    if (Math.abs(v) < 0.6) return; // too near white to tell
    assert.equal(
      hue(cells[j]),
      Math.sign(v),
      `heatmap X[1, ${j + 1}] = ${v} drawn as rgb(${cells[j]})`,
    );
    checked++;
  });
  assert.ok(checked >= 4, `only ${checked} cells far enough from 0`);
  await page.click('#tab-bars');
  const bars = await page.$$eval('#view svg.bars-view rect[data-value]', (rs) =>
    rs.map((r) => [Number(r.dataset.value), r.getAttribute('fill')]),
  );
  assert.ok(bars.length >= 16);
  let barsChecked = 0;
  for (const [v, fill] of bars) {
    if (Math.abs(v) < 0.6) continue;
    assert.equal(hue(rgbOf(fill)), Math.sign(v), `bar of ${v} filled ${fill}`);
    barsChecked++;
  }
  assert.ok(barsChecked >= 4);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the “Q/K table for it” preset and a shared link keep the inspected cell', async () => {
  const { page, problems } = await open();
  await change(page, () => page.selectOption('#preset', 'seed003-table'));
  await page.waitForFunction(() => document.querySelector('#inspect-body h3'));
  const heading = await page.textContent('#inspect-body h3');
  assert.match(heading, /\[6, 2\]/);
  assert.match(await page.textContent('#inspect-body'), /6 it.*2 animal/s);
  assert.match(await page.textContent('#inspect-body strong[data-full]'), /^0\.77/);
  assert.equal(await page.getAttribute('#stages [aria-current]', 'data-stage'), 'scores');

  // Inspect another cell, then open the page's link: the same cell is inspected.
  await page.click('button[data-stage="weights"]');
  const canvas = page.locator('#view canvas.heatmap');
  const { left, top, cell } = await heatmapCells(page);
  await canvas.click({ position: { x: left + cell * 3.5, y: top + cell * 4.5 } });
  await page.waitForFunction(() =>
    /\[5, 4\]/.test(document.querySelector('#inspect-body h3')?.textContent ?? ''),
  );
  await page.waitForTimeout(400); // the link is written once things are quiet
  const second = await open(new URL(page.url()).hash);
  await second.page.waitForFunction(() => document.querySelector('#inspect-body h3'));
  assert.match(await second.page.textContent('#inspect-body h3'), /Attention weights.*\[5, 4\]/);
  assert.equal(await second.page.getAttribute('#stages [aria-current]', 'data-stage'), 'weights');
  assert.deepEqual([...problems, ...second.problems], []);
  await second.page.close();
  await page.close();
});

test('the scale stage says what the temperature does; tiny temperatures are clamped with a note', async () => {
  const { page, problems } = await open();
  await showSettings(page);
  await change(page, () => page.selectOption('#scaleMode', 'temperature'));
  const setTemperature = (t) =>
    change(page, async () => {
      await page.fill('#temperature', t);
      await page.press('#temperature', 'Tab');
    });
  await setTemperature('0.1');
  await page.click('button[data-stage="scaled"]');
  let text = await page.textContent('#stage-explain');
  assert.match(text, /temperature 0\.1 \(× 10\)/);
  assert.doesNotMatch(text, /√d_k/);
  await setTemperature('1');
  text = await page.textContent('#stage-explain');
  assert.match(text, /temperature 1 .*unchanged/);
  assert.doesNotMatch(text, /no scaling/i);
  await setTemperature('5e-324');
  assert.match(await page.textContent('#temperature-note'), /at least 0\.000001.*using 0\.000001/);
  assert.equal(await page.isHidden('#error'), true, await page.textContent('#error'));
  assert.deepEqual(problems, []);
  await page.close();
});

test('Vectors CSV rows match its header; exported PNGs are titled, without selection marks', async () => {
  const { page, problems } = await open();
  await page.click('#tab-bars');
  const csv = (
    await downloadOf(page, () => page.click('#view .export-bar button:has-text("CSV")'))
  ).bytes
    .toString()
    .trim()
    .split('\n');
  const fields = csv.map((line) => line.split(',').length);
  assert.ok(
    fields.every((n) => n === fields[0]),
    `fields per line: ${fields.join(' ')}`,
  );
  assert.ok(!csv.some((line) => /NaN/.test(line)), 'no NaN padding');

  await page.click('#tab-heatmap');
  const canvas = page.locator('#view canvas.heatmap');
  await canvas.click({ position: { x: 120, y: 100 } }); // a selected cell
  const svg = (
    await downloadOf(page, () => page.click('#view .export-bar button:has-text("SVG")'))
  ).bytes.toString();
  const title = await page.textContent('#view figcaption strong');
  const firstText = svg.match(/<text[^>]*>([^<]*)<\/text>/)[1];
  assert.equal(firstText, title, 'the exported figure starts with its title');
  const png = (await downloadOf(page, () => page.click('#view .export-bar button:has-text("PNG")')))
    .bytes;
  const pink = await page.evaluate(async (b64) => {
    const img = new Image();
    img.src = `data:image/png;base64,${b64}`;
    await img.decode();
    const c = document.createElement('canvas');
    c.width = img.width;
    c.height = img.height;
    const ctx = c.getContext('2d');
    ctx.drawImage(img, 0, 0);
    const d = ctx.getImageData(0, 0, c.width, c.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4)
      if (d[i] > 230 && d[i + 1] < 80 && d[i + 2] > 110 && d[i + 2] < 160) n++;
    return n;
  }, png.toString('base64'));
  assert.equal(pink, 0, 'the selection box is not in the exported PNG');
  // The SVG views and the grids are titled too.
  for (const [tab, title] of [
    ['lines', /^Head view: attention weights, sequence 1, head 1$/],
    ['bars', /^Vectors of token \d+ “\w+” \(head 1\)$/],
    ['heads', /^All heads: attention weights, sequence 1$/],
  ]) {
    await page.click(`#tab-${tab}`);
    const file = (
      await downloadOf(page, () => page.click('#view .export-bar button:has-text("SVG")'))
    ).bytes.toString();
    assert.match(file.match(/<text[^>]*>([^<]*)<\/text>/)[1], title, `${tab} export`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('control characters in tokens: SVG exports stay well-formed XML and PNG export works', async () => {
  const { page, problems } = await open();
  await change(page, () => page.fill('#text', 'bell \u0007 and \u0001 here \uFFFF'));
  await page.click('#tab-lines');
  const svg = (
    await downloadOf(page, () => page.click('#view .export-bar button:has-text("SVG")'))
  ).bytes.toString();
  assert.doesNotMatch(svg, /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/);
  const parsed = await page.evaluate(
    (text) =>
      new DOMParser().parseFromString(text, 'image/svg+xml').querySelector('parsererror')
        ?.textContent ?? 'ok',
    svg,
  );
  assert.equal(parsed, 'ok');
  const png = await downloadOf(page, () => page.click('#view .export-bar button:has-text("PNG")'));
  assert.deepEqual([...png.bytes.subarray(0, 4)], [0x89, 0x50, 0x4e, 0x47]);
  assert.equal(await page.isHidden('#error'), true);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the first run reports the engine start apart from the computation', async () => {
  const { page, problems } = await open();
  const status = await page.textContent('#status-text');
  assert.match(status, /Computed by the engine in [\d.]+ ms \(plus \d+ ms to start the engine\)/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the engine start is reported when the engine was ready before the first run began', async () => {
  // The engine line starts the engine at once; the first run waits 120 ms. Here it waits 2 s, so the
  // engine (compiled from the browser's cache) is ready before the run asks for it.
  const laterFirstRun = () => {
    const setTimeoutOfPage = window.setTimeout;
    window.setTimeout = (f, ms, ...rest) => setTimeoutOfPage(f, ms === 120 ? 2000 : ms, ...rest);
  };
  const { page, problems } = await openAt(site, kToy, kLaptop, { init: laterFirstRun });
  const status = await page.textContent('#status-text');
  // Loading and compiling take milliseconds, even from the cache: never "0 ms".
  assert.match(
    status,
    /Computed by the engine in [\d.]+ ms \(plus [1-9]\d* ms to start the engine\)/,
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test('token chips are one keyboard stop: arrow keys move between them', async () => {
  const { page, problems } = await open();
  const stops = await page.$$eval(
    '#chips button.chip',
    (bs) => bs.filter((b) => b.tabIndex === 0).length,
  );
  assert.equal(stops, 1);
  // The chips follow the bar's fields: Tab from its last one reaches the row.
  await page.focus('#more-settings');
  await page.keyboard.press('Tab');
  assert.equal(await page.evaluate(() => document.activeElement.textContent), 'The');
  await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() => document.activeElement?.textContent === 'animal');
  await page.keyboard.press('End');
  await page.waitForFunction(() => document.activeElement?.textContent === '.');
  assert.deepEqual(problems, []);
  await page.close();
});

test('importing weights with an invalid d_model keeps the current value and says why', async () => {
  const { page, problems } = await open();
  await showSettings(page);
  await change(page, async () => {
    await page.fill('#dModel', '8');
    await page.press('#dModel', 'Tab');
  });
  const row = Array(16).fill(0.5);
  const file = { dModel: 'abc', wq: Array.from({ length: 8 }, () => row) };
  await change(page, () =>
    page.setInputFiles('#import-weights', {
      name: 'w.json',
      mimeType: 'application/json',
      buffer: Buffer.from(JSON.stringify(file)),
    }),
  );
  assert.equal(await page.inputValue('#dModel'), '8');
  assert.match(
    await page.textContent('#error'),
    /dModel in the file \("abc"\) is not a whole number 1–512; keeping 8/,
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test('laptop 1366×768: the attention is on screen at first sight; no axe-core violations', async () => {
  const { page, problems } = await open();
  assert.equal(await page.getAttribute('#stages [aria-current]', 'data-stage'), 'weights');
  // The whole first heatmap is on screen under the compact input bar, without scrolling.
  const canvas = await page.locator('#view canvas.heatmap').boundingBox();
  assert.ok(
    canvas.y + canvas.height <= kLaptop.height,
    `the weights span y = ${canvas.y}…${canvas.y + canvas.height}`,
  );
  const bar = await page.locator('#input').boundingBox();
  assert.ok(bar.height <= 100, `the input bar is ${bar.height}px tall`);
  assert.match(await page.textContent('#view figure.matrix figcaption'), /Attention weights/);
  assert.match(
    await page.textContent('#weights-note'),
    /Random weights.*mean nothing.*trained KJV model/s,
  );
  const q = await page.locator('#view canvas.heatmap').boundingBox();
  const kv = await page.evaluate(() => Boolean(document.querySelector('.intro[open]')));
  assert.equal(kv, false, 'the glossary starts folded');
  await page.screenshot({ path: join(screenshots, 'laptop-first-sight.png') });
  // Q, K and V side by side.
  await page.click('button[data-stage="qkv"]');
  const boxes = await page.$$eval('#view figure.matrix', (fs) =>
    fs
      .filter((f) => ['q', 'k', 'v'].includes(f.dataset.matrix))
      .map((f) => f.getBoundingClientRect().top),
  );
  assert.equal(boxes.length, 3);
  assert.ok(Math.abs(boxes[0] - boxes[2]) < 2, `Q, K, V tops ${boxes}`);
  await page.screenshot({ path: join(screenshots, 'laptop-qkv.png') });
  await page.click('button[data-stage="weights"]');
  assert.ok(q.width > 200);
  assert.deepEqual(await axeViolations(page), []);
  for (const tab of ['lines', 'heads', 'bars', 'batch']) {
    await page.click(`#tab-${tab}`);
    assert.deepEqual(await axeViolations(page), [], `axe in the ${tab} view`);
  }
  assert.deepEqual(problems, []);
  await page.close();
});

test('phone 390×844: one column, the figure on the first screen, nothing clipped; no axe-core violations', async () => {
  const { page, problems } = await open(kToy, kPhone);
  const overflow = await page.evaluate(
    () => document.documentElement.scrollWidth - window.innerWidth,
  );
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
  // A compact input bar above; the heatmap's labels and first rows on the first screen.
  const [figure, input] = await page.evaluate(() =>
    ['#view canvas.heatmap', '#input'].map((s) =>
      document.querySelector(s).getBoundingClientRect(),
    ),
  );
  assert.ok(input.bottom <= figure.top, `input ends at ${input.bottom}, figure at ${figure.top}`);
  assert.ok(input.height <= 200, `the input bar is ${input.height}px tall`);
  assert.ok(figure.top + 120 < kPhone.height, `the figure starts at ${figure.top}`);
  // The figure is not cut by its box: the canvas fits the screen width.
  const canvas = await page.locator('#view canvas.heatmap').boundingBox();
  assert.ok(
    canvas.x >= 0 && canvas.x + canvas.width <= kPhone.width + 1,
    `canvas ${canvas.x}…${canvas.x + canvas.width}`,
  );
  await page.screenshot({ path: join(screenshots, 'phone-first-sight.png') });
  // Tapping a cell opens the inspector right there: next to the cell, on screen, focused.
  const tap = { x: canvas.width * 0.6, y: canvas.height * 0.6 };
  await page.locator('#view canvas.heatmap').click({ position: tap });
  const popover = page.locator('#inspect-popover');
  await popover.waitFor();
  const cell = await page.locator('#view canvas.heatmap').boundingBox();
  const at = { x: cell.x + tap.x, y: cell.y + tap.y };
  const box = await popover.boundingBox();
  assert.ok(
    box.x >= 0 &&
      box.y >= 0 &&
      box.x + box.width <= kPhone.width &&
      box.y + box.height <= kPhone.height,
    `popover ${JSON.stringify(box)} leaves the screen`,
  );
  const gap = Math.max(box.y - at.y, at.y - (box.y + box.height));
  assert.ok(
    gap > 0 && gap < 60,
    `popover ${gap}px from the tapped cell (${JSON.stringify(box)}, tap at ${JSON.stringify(at)})`,
  );
  assert.ok(
    at.x >= box.x - 60 && at.x <= box.x + box.width + 60,
    'popover beside the tapped cell horizontally',
  );
  assert.match(await popover.textContent(), /value: /);
  assert.equal(await page.evaluate(() => document.activeElement?.id), 'inspect-popover');
  await page.screenshot({ path: join(screenshots, 'phone-inspect.png') });
  assert.deepEqual(await axeViolations(page), []);
  // Escape closes it and gives focus back to the heatmap.
  await page.keyboard.press('Escape');
  await popover.waitFor({ state: 'detached' });
  assert.equal(
    await page.evaluate(() => document.activeElement?.classList.contains('heatmap')),
    true,
  );
  // Tapping outside closes it too.
  await page
    .locator('#view canvas.heatmap')
    .click({ position: { x: canvas.width * 0.5, y: canvas.height * 0.5 } });
  await popover.waitFor();
  await page.mouse.click(5, 5);
  await popover.waitFor({ state: 'detached' });
  await page.click('#tab-lines');
  const lines = await page.locator('#view svg.lines-view').boundingBox();
  assert.ok(lines.x + lines.width <= kPhone.width + 1, 'the Head view fits the screen');
  await page.screenshot({ path: join(screenshots, 'phone-head-view.png') });
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

/** Distinct pictures of the first heatmap over `ms` after `act`, sampled every animation frame. */
async function framesAfter(page, act, ms = 1500) {
  await page.evaluate((ms) => {
    window.__frames = new Set();
    const end = performance.now() + ms;
    const grab = () => {
      const c = document.querySelector('#view canvas.heatmap');
      if (c) window.__frames.add(c.toDataURL());
      if (performance.now() < end) requestAnimationFrame(grab);
    };
    requestAnimationFrame(grab);
  }, ms);
  await act();
  await page.waitForTimeout(ms + 200);
  return page.evaluate(() => window.__frames.size);
}

test('stages animate their computation: many frames per stage, scrubbable; reduced motion steps', async () => {
  const { page, problems } = await open();
  // Q·Kᵀ: the focused query's scores fill in key by key as the products add up.
  const scores = await framesAfter(page, () => page.click('button[data-stage="scores"]'));
  assert.ok(scores >= 6, `${scores} distinct pictures while Q·Kᵀ builds up`);
  // Scrubbing shows any moment: half way the row is not complete.
  await page.locator('#stage-time').fill('40');
  const half = await page.evaluate(() =>
    document.querySelector('#view canvas.heatmap').toDataURL(),
  );
  await page.locator('#stage-time').fill('100');
  const whole = await page.evaluate(() =>
    document.querySelector('#view canvas.heatmap').toDataURL(),
  );
  assert.notEqual(half, whole);
  // softmax: the row's bars go from exp(s − max) to weights summing to 1.
  await page.click('button[data-stage="weights"]');
  await page.locator('#stage-time').fill('0');
  const start = Number(await page.getAttribute('#view .row-bars', 'data-sum'));
  await page.locator('#stage-time').fill('100');
  const end = Number(await page.getAttribute('#view .row-bars', 'data-sum'));
  assert.ok(start > 1.5, `Σ exp(s − max) = ${start}`);
  assert.ok(Math.abs(end - 1) < 1e-5, `the weights sum to ${end}`);
  // The Head view follows: the focused query's lines thin out as its row is normalised.
  await page.click('#tab-lines');
  const widths = () =>
    page.$$eval('#view svg.lines-view line', (ls) =>
      ls.reduce((a, l) => a + Number(l.getAttribute('stroke-width')), 0),
    );
  await page.locator('#stage-time').fill('0');
  const wide = await widths();
  await page.locator('#stage-time').fill('100');
  const normalised = await widths();
  assert.ok(
    wide > normalised + 1,
    `lines ${wide} at the start of softmax, ${normalised} at its end`,
  );
  await page.click('#tab-heatmap');
  // weights·V: the output row sums the weighted values.
  const output = await framesAfter(page, () => page.click('button[data-stage="headOutputs"]'));
  assert.ok(output >= 6, `${output} distinct pictures while weights·V builds up`);
  await page.screenshot({ path: join(screenshots, 'animation-end.png') });

  await page.emulateMedia({ reducedMotion: 'reduce' });
  const stepped = await framesAfter(page, () => page.click('button[data-stage="scores"]'), 800);
  assert.ok(stepped <= 2, `${stepped} pictures with reduced motion`);
  assert.equal(await page.inputValue('#stage-time'), '100');
  assert.deepEqual(problems, []);
  await page.close();
});

test('concat, W_O, All heads, Batch and Vectors build up within their stage; reduced motion steps', async () => {
  const { page, problems } = await open();
  // concat: the heads' outputs slide into place one after the other.
  const concat = await framesAfter(page, () => page.click('button[data-stage="concat"]'));
  assert.ok(concat >= 6, `${concat} distinct pictures while the heads are concatenated`);
  // Half way, head 2's columns are not all in place yet: the picture differs from the end.
  await page.locator('#stage-time').fill('60');
  const sliding = await page.evaluate(() =>
    document.querySelector('#view canvas.heatmap').toDataURL(),
  );
  await page.locator('#stage-time').fill('100');
  assert.notEqual(
    sliding,
    await page.evaluate(() => document.querySelector('#view canvas.heatmap').toDataURL()),
  );
  // All heads and Batch follow the stage: each head's focused row fills in during Q·Kᵀ.
  await page.click('#tab-heads');
  const heads = await framesAfter(page, () => page.click('button[data-stage="scores"]'));
  assert.ok(heads >= 6, `${heads} distinct pictures of head 1 in All heads while Q·Kᵀ builds up`);
  await page.click('#tab-batch');
  const batch = await framesAfter(page, () => page.click('button[data-stage="weights"]'));
  assert.ok(batch >= 4, `${batch} distinct pictures in Batch while softmax normalises`);
  // Vectors: q, k and v grow component by component in the Q, K, V stage.
  await page.click('#tab-bars');
  await page.click('button[data-stage="qkv"]');
  await page.locator('#stage-time').fill('30');
  const partial = await page.$$eval(
    '#view g[data-series="q (query)"] rect',
    (rs) => rs.filter((r) => Number(r.getAttribute('data-value')) !== 0).length,
  );
  await page.locator('#stage-time').fill('100');
  const whole = await page.$$eval(
    '#view g[data-series="q (query)"] rect',
    (rs) => rs.filter((r) => Number(r.getAttribute('data-value')) !== 0).length,
  );
  assert.ok(
    partial > 0 && partial < whole,
    `${partial} of ${whole} query components shown at 30 %`,
  );
  // W_O (transformer block): the product builds row by row.
  await page.click('#tab-heatmap');
  await showSettings(page);
  await change(page, () => page.check('#block'));
  const wo = await framesAfter(page, () => page.click('button[data-stage="wo"]'));
  assert.ok(wo >= 6, `${wo} distinct pictures while ·W_O builds up`);
  await page.screenshot({ path: join(screenshots, 'animation-wo.png') });
  // Reduced motion: the step-wise version, one picture per stage.
  await page.emulateMedia({ reducedMotion: 'reduce' });
  const stepped = await framesAfter(page, () => page.click('button[data-stage="concat"]'), 800);
  assert.ok(stepped <= 2, `${stepped} pictures of concat with reduced motion`);
  assert.deepEqual(problems, []);
  await page.close();
});

test('zoom: + and − buttons and ctrl + wheel zoom the heatmap; a shared link keeps the zoom', async () => {
  const { page, problems } = await open();
  const words = Array.from(
    { length: 40 },
    (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'warm', 'mat', 'today'][i % 8],
  ).join(' ');
  await change(page, () => page.fill('#text', words));
  const size = async () =>
    Number((await page.textContent('#view figure.matrix figcaption')).match(/\((\d+) × \d+\)/)[1]);
  assert.equal(await size(), 40);
  await page.click('#zoom-in');
  assert.equal(await size(), 27);
  // Ctrl + wheel (what a trackpad pinch sends) over the figure zooms out again; a plain
  // wheel is left to scroll the page. Dispatched in the page: headless Chromium keeps
  // a ctrl + wheel from the mouse for its own zoom.
  const wheel = (ctrlKey) =>
    page.$eval(
      '#view figure.matrix canvas',
      (c, ctrlKey) => {
        const e = new WheelEvent('wheel', {
          deltaY: 120,
          ctrlKey,
          bubbles: true,
          cancelable: true,
        });
        c.dispatchEvent(e);
        return e.defaultPrevented;
      },
      ctrlKey,
    );
  assert.equal(await wheel(false), false);
  assert.equal(await size(), 27);
  assert.equal(await wheel(true), true);
  await page.waitForFunction(() =>
    /\(40 × 40\)/.test(document.querySelector('#view figure.matrix figcaption').textContent),
  );
  await page.click('#zoom-in');
  await page.click('#zoom-in');
  assert.equal(await size(), 18);
  assert.equal(await page.inputValue('#zoom'), '18');
  await page.waitForFunction(() => location.hash.length > 10);
  await page.waitForTimeout(500); // the link is written once things are quiet
  const hash = await page.evaluate(() => location.hash);
  const again = await open(hash);
  assert.equal(await again.page.inputValue('#zoom'), '18');
  assert.match(await again.page.textContent('#view figure.matrix figcaption'), /\(18 × 18\)/);
  assert.deepEqual(again.problems, []);
  await again.page.close();
  assert.deepEqual(problems, []);
  await page.close();
});

test('long inputs: zoomed heatmap with an overview to move over, labelled heads on one scale, a Head view that fits', async () => {
  const { page, problems } = await open();
  await change(page, () => page.selectOption('#preset', 'long512'));
  assert.equal(await page.inputValue('#zoom'), '32');
  assert.match(await page.textContent('#view figure.matrix figcaption'), /\(32 × 32\)/);
  const before = await page.textContent('#view .overview figcaption');
  const overview = page.locator('#view .overview canvas');
  const box = await overview.boundingBox();
  await overview.click({ position: { x: box.width * 0.8, y: box.height * 0.8 } });
  const after = await page.textContent('#view .overview figcaption');
  assert.notEqual(after, before, 'the overview moves the zoomed window');
  const start = Number(after.match(/tokens (\d+)–/)[1]);
  assert.ok(
    start > 330 && start < 450,
    `the window starts at token ${start} after a click at 80 %`,
  );
  await page.screenshot({ path: join(screenshots, 'long512-zoom.png') });
  await page.selectOption('#zoom', '0');
  assert.match(await page.textContent('#view figure.matrix figcaption'), /\(512 × 512\)/);
  await page.click('#tab-heads');
  const captions = await page.$$eval('#view figure.mini figcaption', (fs) =>
    fs.map((f) => f.textContent),
  );
  assert.equal(captions.length, 8);
  assert.doesNotMatch(
    await page.textContent('#view p.explain'),
    /\blearns?\b/,
    'random heads do not learn',
  );
  assert.match(captions[1], /^Head 2/);
  assert.equal(await page.locator('#view .legend').count(), 1, 'one legend: one shared scale');
  await page.screenshot({ path: join(screenshots, 'long512-heads.png') });
  await page.click('#tab-lines');
  const lines = await page.locator('#view svg.lines-view').boundingBox();
  assert.ok(lines.height <= 600, `Head view ${lines.height}px tall`);
  const outside = await page.$$eval(
    '#view svg.lines-view line',
    (ls, h) => ls.filter((l) => Number(l.getAttribute('y2')) > h).length,
    lines.height,
  );
  assert.equal(outside, 0, 'no line leaves the box');
  assert.deepEqual(problems, []);
  await page.close();
});
