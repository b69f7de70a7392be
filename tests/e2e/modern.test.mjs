// The "Modern attention" views (RoPE, GQA/MQA, window and ALiBi, KV-cache decoding,
// flash tiles) in headless Chromium: the numbers they show are checked against the
// package run in Node on the page's own q, k and v (read from its JSON export), the
// tabs and players work from the keyboard, axe-core finds nothing, and screenshots at
// a laptop's and a phone's size go to /tmp/modern-shots/ (outside the repo).
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { kToy, repo, showSettings, useSite, waitReady, watch } from './harness.mjs';
import { axeViolations } from './learners-helpers.mjs';

const site = useSite();
const kLaptop = { width: 1366, height: 768 };
const kPhone = { width: 390, height: 844 };
const kShots = '/tmp/modern-shots';
const kModernTabs = ['rope', 'gqa', 'window', 'kv-cache', 'flash'];
let engine;
before(async () => {
  engine = await createAttnScope();
  mkdirSync(kShots, { recursive: true });
});

async function open(viewport = kLaptop) {
  const page = await site.browser.context.newPage();
  await page.setViewportSize(viewport);
  const problems = watch(page);
  await page.goto(site.server.url + kToy);
  await waitReady(page);
  return { page, problems };
}

/** Waits until the view's engine calls answer its current settings. */
async function viewReady(page, name) {
  await page.waitForTimeout(50); // the settings' re-render first marks it "computing"
  await page.waitForSelector(`#view [data-modern="${name}"][data-engine="ready"]`, {
    timeout: 30_000,
  });
}

/**
 * Runs `change` (a setting of view `name`) and waits until the view has gone back
 * to computing and is ready again: a fixed pause before viewReady can end before the
 * page has re-rendered, and then reads the answer to the former setting.
 */
async function changeView(page, name, change) {
  await page.evaluate((name) => {
    window.__viewChanged = false;
    const root = () => document.querySelector(`#view [data-modern="${name}"]`);
    const seen = new MutationObserver(() => {
      if (root()?.dataset.engine !== 'computing') return;
      window.__viewChanged = true;
      seen.disconnect();
    });
    seen.observe(document.querySelector('#view'), {
      subtree: true,
      childList: true,
      attributes: true,
      attributeFilter: ['data-engine'],
    });
  }, name);
  await change();
  await page.waitForFunction(() => window.__viewChanged, null, { timeout: 30_000 });
  await viewReady(page, name);
}

async function showTab(page, tab, name = tab) {
  await page.click(`#tab-${tab}`);
  await viewReady(page, name);
}

/** The page's q, k, v of sequence 1 as (H, T, d), from its "Export everything" JSON. */
async function pageTensors(page) {
  const [dl] = await Promise.all([page.waitForEvent('download'), page.click('#export-json')]);
  const json = JSON.parse((await readFile(await dl.path())).toString());
  const t = json.results.attention.trace;
  const [B, H, T, dK] = t.q.shape;
  assert.equal(B, 1, 'the default text is one sentence');
  return {
    H,
    T,
    dK,
    dV: t.v.shape[3],
    q: Float32Array.from(t.q.data),
    k: Float32Array.from(t.k.data),
    v: Float32Array.from(t.v.data),
    tokens: json.inputs.tokens[0],
  };
}

const num = (s) => Number(String(s).replace('−', '-'));
/** The values a CellGrid shows, from each cell's <title> ("… : value"); null for hidden cells. */
const gridValues = (page, selector) =>
  page.$$eval(`${selector} rect.cell`, (rects) =>
    rects.map((r) => ({
      i: Number(r.dataset.i),
      j: Number(r.dataset.j),
      hidden: r.classList.contains('hidden'),
      value: r.querySelector('title')?.textContent.split(': ').pop() ?? null,
    })),
  );

function assertClose(got, want, tol, what) {
  assert.ok(
    Math.abs(got - want) <= tol * Math.max(1, Math.abs(want)),
    `${what}: ${got} vs ${want}`,
  );
}

test('KV cache: each decode step (engine, Tq = 1 against the cache) equals the full causal run, as in Node', async () => {
  const { page, problems } = await open();
  const t = await pageTensors(page);
  await showTab(page, 'kv-cache', 'decode');
  const full = engine.attention({
    q: t.q,
    k: t.k,
    v: t.v,
    shape: [t.H, t.T, t.dK],
    dv: t.dV,
    mask: 'causal',
    trace: false,
  });
  // The player's forward button, from the keyboard: step 4 → 5.
  await page.focus('#view [data-act="forward"]');
  await page.keyboard.press('Enter');
  await page.waitForSelector('#decode-check[data-step="4"]');
  for (const step of [4, 5]) {
    if (step === 5) {
      await page.keyboard.press('Enter');
      await page.waitForSelector('#decode-check[data-step="5"]');
    }
    const check = await page.$eval('#decode-check', (p) => ({ ...p.dataset, text: p.textContent }));
    const shown = check.output.split(',').map(Number);
    for (let h = 0; h < t.H; h++)
      for (let x = 0; x < t.dV; x++)
        assertClose(
          shown[h * t.dV + x],
          full.output.data[(h * t.T + step) * t.dV + x],
          1e-5,
          `step ${step + 1}, head ${h + 1}, component ${x + 1}`,
        );
    assert.ok(Number(check.maxDiff) <= 1e-5, check.text);
    assert.match(check.text, /^✓ Output row \d+ .*equals row/);
    assert.match(
      await page.textContent('#decode-step'),
      new RegExp(
        `Step ${step + 1}: “${t.tokens[step].replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}” arrives`,
      ),
    );
  }
  assert.ok(Number(await page.getAttribute('#decode-check', 'data-worst')) <= 1e-5);
  // The cache shows step + 1 rows of K; the new one is outlined.
  assert.equal(await page.locator('#view [data-cache="K"] rect.cell').count(), 6 * t.dK);
  const C = 16; // the page's default d_model
  const cached = C * t.H * (2 * t.dK + t.dV) + t.H * 6 * (t.dK + t.dV);
  assert.equal(Number(await page.getAttribute('#decode-cost td[data-cost]', 'data-cost')), cached);
  assert.deepEqual(problems, []);
  await page.close();
});

test('GQA / MQA: shared kv heads, the weights with kvShape as in Node, the cache memory in bytes', async () => {
  const { page, problems } = await open();
  const t = await pageTensors(page);
  await showTab(page, 'gqa');
  await page.selectOption('#gqa-kv', '1');
  await viewReady(page, 'gqa');
  // MQA: both query heads read one kv head, the mean of the page's two heads.
  const n = t.T * t.dK;
  const k1 = new Float32Array(n);
  const v1 = new Float32Array(t.T * t.dV);
  for (let h = 0; h < t.H; h++) {
    for (let x = 0; x < n; x++) k1[x] += t.k[h * n + x] / t.H;
    for (let x = 0; x < t.T * t.dV; x++) v1[x] += t.v[h * t.T * t.dV + x] / t.H;
  }
  const want = engine.attention({
    q: t.q,
    k: k1,
    v: v1,
    shape: [t.H, t.T, t.dK],
    kvShape: [1, t.T, t.dK],
    dv: t.dV,
    mask: 'causal',
    trace: true,
  });
  for (let h = 0; h < t.H; h++) {
    const cells = await gridValues(page, `#view figure[data-head="${h}"]`);
    assert.equal(cells.length, t.T * t.T);
    for (const c of cells) {
      const w = want.trace.weights.data[(h * t.T + c.i) * t.T + c.j];
      assert.equal(c.hidden, c.j > c.i, `causal cell (${c.i}, ${c.j})`);
      if (!c.hidden) assertClose(num(c.value), w, 1e-6, `head ${h + 1} weight (${c.i}, ${c.j})`);
    }
  }
  const bytes = await page.$$eval('#gqa-memory td[data-bytes]', (tds) =>
    tds.map((td) => Number(td.dataset.bytes)),
  );
  const perToken = (kv) => kv * (t.dK + t.dV) * 4;
  assert.deepEqual(bytes, [perToken(t.H), perToken(t.H) * t.T, perToken(1), perToken(1) * t.T]);
  assert.equal(
    Number(await page.getAttribute('#gqa-memory td[data-given]', 'data-given')),
    (k1.length + v1.length) * 4,
  );
  assert.match(
    await page.getAttribute('#view svg.gqa-sharing', 'aria-label'),
    /kv head 1 serves query heads 1–2/,
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test('window and sinks: the visible band is the engine’s mask; ALiBi slopes and bias as in Node', async () => {
  const { page, problems } = await open();
  const t = await pageTensors(page);
  await showTab(page, 'window');
  await changeView(page, 'window', async () => {
    await page.fill('#window-size', '3');
    await page.press('#window-size', 'Tab');
  });
  await changeView(page, 'window', async () => {
    await page.fill('#window-sinks', '2');
    await page.press('#window-sinks', 'Tab');
  });
  assert.match(
    await page.textContent('#view [data-grid="weights"] figcaption'),
    /\|i − j\| < 3 or j < 2/,
  );
  const mask = { causal: true, window: 3, sinks: 2 };
  const want = engine.attention({
    q: t.q,
    k: t.k,
    v: t.v,
    shape: [t.H, t.T, t.dK],
    dv: t.dV,
    mask,
    trace: true,
  });
  const cells = await gridValues(page, '#view [data-grid="weights"]');
  let visible = 0;
  for (const c of cells) {
    const m = want.trace.masked.data[c.i * t.T + c.j];
    assert.equal(c.hidden, m === -Infinity, `cell (${c.i}, ${c.j})`);
    // The rule itself, not only the engine's word for it.
    assert.equal(c.hidden, !(c.j <= c.i && (c.i - c.j < 3 || c.j < 2)), `rule at (${c.i}, ${c.j})`);
    if (!c.hidden) {
      visible++;
      assertClose(
        num(c.value),
        want.trace.weights.data[c.i * t.T + c.j],
        1e-6,
        `weight (${c.i}, ${c.j})`,
      );
    }
  }
  assert.equal(Number(await page.getAttribute('#window-visible', 'data-count')), visible);
  // ALiBi: the bias beside the scores, one slope per head.
  await changeView(page, 'window', () => page.check('#window-alibi'));
  const alibi = engine.attention({
    q: t.q,
    k: t.k,
    v: t.v,
    shape: [t.H, t.T, t.dK],
    dv: t.dV,
    mask,
    bias: 'alibi',
    trace: true,
  });
  const slopes = await page.$$eval('#alibi-slopes [data-slope]', (s) =>
    s.map((x) => Number(x.dataset.slope)),
  );
  assert.deepEqual(
    slopes,
    Array.from({ length: t.H }, (_, h) => 2 ** ((-8 * (h + 1)) / t.H)),
  );
  const bias = await gridValues(page, '#view [data-grid="bias"]');
  for (const c of bias)
    assertClose(
      num(c.value),
      alibi.trace.bias.data[c.i * t.T + c.j],
      1e-6,
      `bias (${c.i}, ${c.j})`,
    );
  assert.equal(bias.length, t.T * t.T);
  assert.deepEqual(problems, []);
  await page.close();
});

test('RoPE: the engine’s score of two tokens stays when both move; it is the score at their own positions in Node', async () => {
  const { page, problems } = await open();
  const t = await pageTensors(page);
  await showTab(page, 'rope');
  const { at, text } = await page.$eval('#rope-scores', (p) => ({
    at: Number(p.dataset.at),
    text: p.textContent,
  }));
  const [, i, j] = text.match(/At positions \((\d+), (\d+)\)/).map(Number);
  const rotated = engine.attention({
    q: t.q,
    k: t.k,
    v: t.v,
    shape: [t.H, t.T, t.dK],
    dv: t.dV,
    rope: { base: 10000 },
    trace: true,
  });
  assertClose(
    at,
    rotated.trace.scores.data[i * t.T + j],
    1e-5,
    'score at the tokens’ own positions',
  );
  // Move both by 5 from the keyboard.
  await page.focus('#rope-shift');
  for (let n = 0; n < 5; n++) await page.keyboard.press('ArrowRight');
  await page.waitForFunction(() =>
    /Moved by 5/.test(document.getElementById('rope-scores').textContent),
  );
  const moved = await page.$eval('#rope-scores', (p) => ({ ...p.dataset }));
  assertClose(Number(moved.moved), at, 1e-5, 'moved by 5');
  assert.ok(Number(moved.spread) <= 1e-5 * Math.max(1, Math.abs(at)), `spread ${moved.spread}`);
  // The dials: one per token, the angle position × θ_0 = position radians for pair 0.
  assert.equal(await page.locator('#view svg.rope-dials g[data-pos]').count(), Math.min(t.T, 32));
  assert.match(await page.textContent('#view svg.rope-dials g[data-pos="3"]'), /3 rad/);
  assert.deepEqual(problems, []);
  await page.close();
});

test('flash tiles: skipped tiles, and the log-sum-exp recovers the engine’s weights', async () => {
  const { page, problems } = await open();
  const t = await pageTensors(page);
  await showTab(page, 'flash');
  const want = engine.attention({
    q: t.q,
    k: t.k,
    v: t.v,
    shape: [t.H, t.T, t.dK],
    dv: t.dV,
    mask: 'causal',
    trace: true,
  });
  const tiles = Math.ceil(t.T / 4);
  let skipped = 0;
  for (let a = 0; a < tiles; a++)
    for (let b = 0; b < tiles; b++) {
      let any = false;
      for (let i = a * 4; i < Math.min(t.T, a * 4 + 4); i++)
        for (let j = b * 4; j < Math.min(t.T, b * 4 + 4); j++)
          any ||= want.trace.masked.data[i * t.T + j] > -Infinity;
      if (!any) skipped++;
    }
  assert.match(
    await page.textContent('#view .legend-line'),
    new RegExp(`\\(${skipped} of ${tiles * tiles} tiles\\)`),
  );
  // A step from the keyboard, then the last frame: the position slider's End key.
  await page.focus('#view [data-act="forward"]');
  await page.keyboard.press('Enter');
  assert.match(await page.textContent('#view .player-status'), /^Tile 2 of/);
  await page.focus('#view .player input[type="range"]');
  await page.keyboard.press('End');
  await page.waitForSelector('#flash-check');
  const check = await page.$eval('#flash-check', (p) => ({ ...p.dataset, text: p.textContent }));
  assert.ok(Number(check.maxDiff) <= 1e-6, check.text);
  assert.ok(Number(check.fastDiff) <= 1e-5, check.text);
  assert.match(check.text, /^✓ /);
  // The log-sum-exp of each row: s − ln w for any key the row sees, in Node.
  const lse = await page.$$eval('#flash-running td[data-lse]', (tds) =>
    tds.map((td) => Number(td.dataset.lse)),
  );
  assert.equal(lse.length, t.T);
  lse.forEach((v, i) =>
    assertClose(
      v,
      want.trace.masked.data[i * t.T] - Math.log(want.trace.weights.data[i * t.T]),
      1e-5,
      `log-sum-exp of row ${i + 1}`,
    ),
  );
  const cells = await gridValues(page, '#view figure');
  assert.equal(cells.length, t.T * t.T);
  for (const c of cells)
    if (!c.hidden)
      assertClose(
        num(c.value),
        want.trace.weights.data[c.i * t.T + c.j],
        1e-6,
        `weight (${c.i}, ${c.j})`,
      );
  assert.deepEqual(problems, []);
  await page.close();
});

test('the modern tabs by keyboard; no axe-core violations; laptop and phone screenshots, nothing wider than the screen', async () => {
  for (const [name, viewport] of [
    ['laptop', kLaptop],
    ['phone', kPhone],
  ]) {
    const { page, problems } = await open(viewport);
    // From the tab before them (the Model view), → reaches the first modern one and selects it.
    await page.click('#tab-model');
    await page.focus('#tab-model');
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.activeElement?.id === 'tab-rope');
    assert.equal(await page.getAttribute('#tab-rope', 'aria-selected'), 'true');
    for (const tab of kModernTabs) {
      const id = tab === 'kv-cache' ? 'decode' : tab;
      if (tab !== 'rope') {
        await page.focus('#tab-rope');
        await page.click(`#tab-${tab}`);
      }
      await viewReady(page, id);
      const overflow = await page.evaluate(
        () => document.documentElement.scrollWidth - window.innerWidth,
      );
      assert.ok(overflow <= 0, `${tab} at ${name}: page ${overflow}px wider than the screen`);
      // Nothing of the view cut at the right edge (scroll boxes hold what is wider).
      const cut = await page.$$eval(
        '#view [data-modern] > *, #view .modern-table, #view figure',
        (els) =>
          els
            .filter(
              (e) =>
                !e.closest('.scroll') &&
                e.getBoundingClientRect().right > window.innerWidth + 1 &&
                e.scrollWidth > e.clientWidth + 1,
            )
            .map((e) => e.className || e.tagName),
      );
      assert.deepEqual(cut, [], `${tab} at ${name}: cut at the right edge`);
      await page.locator('#view').screenshot({ path: join(kShots, `${name}-${tab}.png`) });
      assert.deepEqual(await axeViolations(page), [], `axe in the ${tab} view (${name})`);
    }
    assert.deepEqual(problems, []);
    await page.close();
  }
});

async function recompute(page, action) {
  const before = Number(await page.evaluate(() => document.body.dataset.ready));
  await action();
  await waitReady(page, before);
}

test('odd d_k, three heads, one token, a padded sentence, 70 tokens: the views say what the engine refused and keep working', async () => {
  const { page, problems } = await open();
  // RoPE needs an even d_k: the engine's error is shown, the other views still compute.
  await showSettings(page);
  await recompute(page, async () => {
    await page.fill('#dK', '7');
    await page.press('#dK', 'Tab');
  });
  await page.click('#tab-rope');
  await page.waitForSelector('#view [data-modern="rope"][data-engine="error"]');
  assert.match(
    await page.textContent('#view .error-text'),
    /The engine rejected RoPE here: .*\b(even|odd)\b/i,
  );
  await showTab(page, 'flash');
  await recompute(page, async () => {
    await page.fill('#dK', '8');
    await page.press('#dK', 'Tab');
  });
  await showTab(page, 'rope');
  // Three heads: kv heads 3 or 1.
  await recompute(page, async () => {
    await page.fill('#heads', '3');
    await page.press('#heads', 'Tab');
  });
  await showTab(page, 'gqa');
  assert.deepEqual(await page.$$eval('#gqa-kv option', (os) => os.map((o) => o.value)), ['3', '1']);
  await page.selectOption('#gqa-kv', '3');
  await viewReady(page, 'gqa');
  assert.equal(await page.locator('#view figure[data-head]').count(), 3);
  // Two sentences of different lengths: the second one's own tokens, no padding.
  await recompute(page, () =>
    page.fill('#text', 'a short one\nthe second sentence is longer than the first'),
  );
  await page.selectOption('#sel-seq', '0');
  for (const tab of kModernTabs) await showTab(page, tab, tab === 'kv-cache' ? 'decode' : tab);
  assert.match(await page.textContent('#view .player-status'), /of \d+/);
  await page.click('#tab-kv-cache');
  await viewReady(page, 'decode');
  assert.match(await page.textContent('#view .player-status'), /^Step \d+ of 3:/);
  // 70 tokens: the views compute on the first 64 and say so.
  await recompute(page, () =>
    page.fill('#text', Array.from({ length: 70 }, (_, i) => `w${i}`).join(' ')),
  );
  await showTab(page, 'window');
  assert.match(await page.textContent('#view .clip-note'), /first 64 of the sentence’s 70 tokens/);
  assert.equal(await page.locator('#view [data-grid="weights"] rect.cell').count(), 64 * 64);
  // One token.
  await recompute(page, () => page.fill('#text', 'alone'));
  for (const tab of kModernTabs) await showTab(page, tab, tab === 'kv-cache' ? 'decode' : tab);
  assert.deepEqual(problems, []);
  await page.close();
});

test('RoPE dials turn from the unrotated vectors to the engine’s, at once with prefers-reduced-motion', async () => {
  const { page, problems } = await open();
  const tip = () =>
    page.$eval('#view svg.rope-dials g[data-pos="5"] line.vec.q:not(.before)', (l) =>
      [l.getAttribute('x2'), l.getAttribute('y2')].join(','),
    );
  await showTab(page, 'rope');
  await page.waitForTimeout(1800);
  const end = await tip();
  await page.click('#rope-turn');
  await page.waitForTimeout(150);
  assert.notEqual(await tip(), end, 'the vectors move while turning');
  await page.waitForTimeout(1800);
  assert.equal(await tip(), end, 'they end at the engine’s rotation');
  await page.emulateMedia({ reducedMotion: 'reduce' });
  await page.click('#rope-turn');
  await page.waitForTimeout(50);
  assert.equal(await tip(), end, 'reduced motion: no turning');
  assert.deepEqual(problems, []);
  await page.close();
});
