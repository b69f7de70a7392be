// The page opens on the model attnscope ships (models/kjv/): it says so while the model
// loads and never shows the toy's figure first; it opens on "it" looking at "light"; the
// heads whose pattern has a name are listed from heads.json, honestly, and a click or
// the keyboard shows that head; the figure starts on the first screen of a laptop and a
// phone, with no column label cut; the tabs speak of the model's own weights and width;
// the toy is one click away and #model=toy opens it, and the toy's note offers the model back.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inflateRawSync } from 'node:zlib';
import { before, test } from 'node:test';

import { bpeTokenizer } from 'attnscope/bpe-tokenizer';

import { kToy, repo, screenshots, useSite, waitReady } from './harness.mjs';
import {
  axeViolations,
  change,
  kLaptop,
  kPhone,
  labelInkAtRightEdge,
  openAt,
} from './learners-helpers.mjs';

const site = useSite();
const heads = JSON.parse(readFileSync(join(repo, 'models/kjv/heads.json'), 'utf8'));
const kVerse =
  'And God saw the light, that it was good: and God divided the light from the darkness.';
let tokenizer;

before(() => {
  tokenizer = bpeTokenizer(
    JSON.parse(readFileSync(join(repo, 'models/kjv/tokenizer.json'), 'utf8')),
  );
});

/** The state the page's link holds. */
async function linkedState(page) {
  await page.waitForFunction(() => location.hash.startsWith('#s='));
  const hash = await page.evaluate(() => location.hash);
  return JSON.parse(inflateRawSync(Buffer.from(hash.slice(3), 'base64url')).toString('utf8'));
}

/** Every head's score for each pattern as the card gives it, with its ratio to chance. */
function scores(pattern) {
  return heads.heads.map((h) => {
    const [, layer, head] = /^L(\d+)H(\d+)$/.exec(h.head).map(Number);
    return { layer, head, share: h[pattern], ratio: h[pattern] / heads.chance[pattern] };
  });
}

test('opens on the KJV model: a note while it loads, never the toy’s figure, then “it” → “light”', async () => {
  const page = await site.browser.context.newPage();
  await page.setViewportSize(kLaptop);
  // Notes whether the first figure drawn is the model's (whose tokens the strip shows).
  await page.addInitScript(() => {
    const look = () => {
      if (document.querySelector('#view canvas'))
        window.__firstFigure = document.querySelector('.token-strip') ? 'model' : 'toy';
      else requestAnimationFrame(look);
    };
    requestAnimationFrame(look);
  });
  // The model's file is held back until the waiting page has been looked at.
  let release;
  const held = new Promise((r) => (release = r));
  await page.route('**/*.safetensors', async (route) => {
    await held;
    await route.continue();
  });
  await page.goto(site.server.url);
  await page.waitForSelector('#model-wait');
  assert.match(await page.textContent('#model-wait'), /Loading attnscope’s KJV model/);
  assert.equal(await page.locator('#view canvas').count(), 0);
  assert.equal(await page.inputValue('#model-source'), 'kjv');
  assert.equal(await page.isDisabled('#model-source'), true, 'one model loads at a time');
  release();
  await waitReady(page);
  assert.match(await page.textContent('#gpt2-loaded'), /^attnscope-kjv\.safetensors/);
  assert.equal(await page.evaluate(() => window.__firstFigure), 'model');
  assert.equal(await page.locator('#model-wait').count(), 0);
  assert.equal(await page.inputValue('#text'), kVerse);
  // The model's own tokens, and the inspected cell is “it” (query) on “light” (key).
  const pieces = await page.$$eval('.token-strip li', (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(
    pieces,
    tokenizer.pieces(kVerse).map((p) => p.text.replace(/ /g, '␣')),
  );
  const state = await linkedState(page);
  assert.equal(state.model, 'kjv');
  assert.equal(pieces[state.sel.query], '␣it');
  assert.equal(pieces[state.sel.key], '␣light');
  assert.equal(state.inspect, 'weights');
  await page.close();
});

test('the named heads match heads.json, say how weak they are, and a click or a key shows the head', async () => {
  const { page, problems } = await openAt(site, '', kLaptop);
  await page.waitForSelector('#named-heads');
  // The head in view: the highest ratio to chance of any pattern, named from 2× chance.
  const patterns = Object.keys(heads.chance);
  const named = patterns.flatMap((p) =>
    scores(p)
      .filter((s) => s.ratio >= 2)
      .map((s) => ({ ...s, pattern: p })),
  );
  assert.ok(named.length > 0, 'heads.json names at least one head');
  const best = named.reduce((a, b) => (b.ratio > a.ratio ? b : a));
  const first = page.locator('#named-heads > button.named-head');
  assert.equal(await first.count(), 1);
  assert.equal(await first.getAttribute('data-layer'), String(best.layer));
  assert.equal(await first.getAttribute('data-head'), String(best.head));
  const text = await first.textContent();
  assert.ok(text.startsWith(`layer ${best.layer + 1}, head ${best.head + 1}`), text);
  assert.ok(text.includes(`${best.ratio.toFixed(1)}× chance`), text);
  assert.ok(text.includes(`${Math.round(best.share * 100)} %`), text);
  // Under a quarter of the head's weight is called weak.
  assert.equal(/\(weak\)/.test(text), best.share < 0.25, text);

  // The fold: every named head of each pattern, in order of share; no name where none is 2×.
  await page.click('#named-heads summary');
  for (const p of patterns) {
    const expected = scores(p)
      .filter((s) => s.ratio >= 2)
      .sort((a, b) => b.share - a.share)
      .map((s) => `${s.layer},${s.head}`);
    const listed = await page.$$eval(`.named-list[data-pattern="${p}"] button`, (bs) =>
      bs.map((b) => `${b.dataset.layer},${b.dataset.head}`),
    );
    assert.deepEqual(listed, expected, p);
    const none = await page.locator(`.named-none[data-pattern="${p}"]`).count();
    assert.equal(none, expected.length === 0 ? 1 : 0, p);
  }

  // A click shows a named head of another layer than the first's and the one shown (layer 1),
  // so the model runs again for it; Enter on the first shows that one.
  const other = named.find((s) => s.layer !== best.layer && s.layer !== 0);
  await change(page, () =>
    page.click(
      `.named-list button[data-layer="${other.layer}"][data-head="${other.head}"][data-pattern="${other.pattern}"]`,
    ),
  );
  assert.equal(await page.inputValue('#sel-layer'), String(other.layer));
  assert.equal(await page.inputValue('#sel-head'), String(other.head));
  assert.equal(await first.getAttribute('aria-pressed'), 'false');
  // Folded again, the head beside the fold is back: Enter on it shows it.
  await page.click('#named-heads summary');
  assert.equal(await first.isVisible(), true);
  await first.focus();
  await change(page, () => page.keyboard.press('Enter'));
  assert.equal(await page.inputValue('#sel-layer'), String(best.layer));
  assert.equal(await page.inputValue('#sel-head'), String(best.head));
  assert.equal(await first.getAttribute('aria-pressed'), 'true');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

for (const [name, viewport] of [
  ['laptop', kLaptop],
  ['phone', kPhone],
]) {
  test(`${viewport.width}×${viewport.height}: with the model loaded, the figure starts on the first screen`, async () => {
    const { page, problems } = await openAt(site, '', viewport, { reducedMotion: true });
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth - window.innerWidth,
    );
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
    const top = await page.$eval('#view canvas.heatmap', (c) => c.getBoundingClientRect().top);
    assert.ok(top + 120 < viewport.height, `the heatmap starts at ${top}px`);
    // The last column's label, “␣darkness”, is written whole inside the picture.
    assert.equal(await labelInkAtRightEdge(page), 0, 'a column label is cut at the right edge');
    // The description is one line until asked for.
    assert.equal(await page.isVisible('#kjv-about'), false);
    await page.screenshot({ path: join(screenshots, `kjv-${name}.png`) });
    await page.click('#model-about summary');
    assert.equal(await page.isVisible('#kjv-about'), true);
    assert.match(await page.textContent('#gpt2-loaded'), /4 layers × 4 heads/);
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await page.close();
  });
}

test('the KV cache tab counts the model’s own width, d_model = 128, not the bias column, and labels its rows', async () => {
  const { page, problems } = await openAt(site, '', kLaptop);
  await page.click('#tab-kv-cache');
  await page.waitForSelector('#decode-cost');
  assert.match(await page.textContent('#decode-cost caption'), /\(d_model = 128, 4 heads\)/);
  // Step 4 of the 20 (the tab opens there): one token's q, k and v, and one query row.
  const [H, d] = [4, 32];
  const cached = 128 * H * 3 * d + H * 4 * 2 * d;
  assert.equal(Number(await page.getAttribute('#decode-cost td[data-cost]', 'data-cost')), cached);
  // A laptop has room for a label on every cached row and every one of the 32 columns;
  // a phone thins them, but never drops the new row's.
  const labels = (p, axis) =>
    p.$$eval(`#view [data-cache="K"] text${axis}`, (ts) => ts.map((x) => x.textContent));
  assert.deepEqual(await labels(page, '[text-anchor="end"]'), [
    '1 And',
    '2 ␣God',
    '3 ␣saw',
    '4 ␣the',
  ]);
  assert.equal((await labels(page, '[transform]')).length, d);
  await page.setViewportSize(kPhone);
  await page.waitForFunction(
    () => document.querySelector('#view [data-cache="K"] svg')?.getAttribute('width') < 390,
  );
  const phoneRows = await labels(page, '[text-anchor="end"]');
  assert.ok(phoneRows.length < 4, `${phoneRows.length} row labels on a phone`);
  assert.equal(phoneRows.at(-1), '4 ␣the');
  // Only the cache's new row is kept: the RoPE grid, whose band outlines a cell in every
  // row, still thins its row labels so that none overlaps the next.
  await page.click('#tab-rope');
  await page.waitForSelector('#rope-scores');
  const ys = await page.$$eval('#view svg.cell-grid text[text-anchor="end"]', (ts) =>
    ts.map((x) => Number(x.getAttribute('y'))),
  );
  assert.ok(ys.length > 1);
  for (let i = 1; i < ys.length; i++) assert.ok(ys[i] - ys[i - 1] >= 12, `labels at ${ys}`);
  assert.deepEqual(problems, []);
  await page.close();
});

/** What the All heads tab says about its heads' differences. */
async function allHeadsNote(page) {
  await page.click('#tab-heads');
  return page.textContent('#view p.explain');
}

test('the toy is one click away, and #model=toy opens it', async () => {
  const { page, problems } = await openAt(site, '', kLaptop);
  // The trained model's heads differ by its training, the toy's by chance.
  assert.match(await allHeadsNote(page), /the loaded model’s own/);
  assert.doesNotMatch(await allHeadsNote(page), /random/);
  // Nor does the Batch tab offer a batch the model does not make.
  await page.click('#tab-batch');
  assert.match(await page.textContent('#view p.explain'), /reads the whole text as one sequence/);
  await change(page, () => page.selectOption('#model-source', 'toy'));
  assert.match(await allHeadsNote(page), /random weights the differences are chance/);
  await page.click('#tab-heatmap');
  assert.equal(await page.evaluate(() => document.body.dataset.model), 'toy');
  assert.equal(await page.inputValue('#text'), kVerse, 'the text is kept');
  assert.equal((await linkedState(page)).model, 'toy');
  await page.close();

  const toy = await openAt(site, kToy, kLaptop);
  assert.equal(await toy.page.evaluate(() => document.body.dataset.model), 'toy');
  assert.match(await toy.page.inputValue('#text'), /^The animal didn't cross the street/);
  assert.equal(await toy.page.locator('#named-heads').count(), 0);
  // The toy's note offers the trained model: one press of a key loads it, the text kept.
  const offer = toy.page.locator('#weights-note button');
  assert.match(await toy.page.textContent('#weights-note'), /mean nothing/);
  assert.equal(await offer.textContent(), 'the trained KJV model');
  await offer.focus();
  await toy.page.keyboard.press('Enter');
  await toy.page.waitForSelector('.token-strip li');
  await waitReady(toy.page);
  assert.match(await toy.page.textContent('#gpt2-loaded'), /^attnscope-kjv\.safetensors/);
  assert.equal(await toy.page.inputValue('#model-source'), 'kjv');
  assert.match(await toy.page.inputValue('#text'), /^The animal didn't cross the street/);
  assert.equal(await toy.page.locator('#weights-note').isVisible(), false);
  await toy.page.close();

  // An unknown model in a link is said, and the page opens on its default.
  const odd = await openAt(site, '#model=gpt5', kLaptop);
  assert.match(await odd.page.textContent('#error'), /does not have \(“gpt5”\)/);
  assert.equal(await odd.page.inputValue('#model-source'), 'kjv');
  assert.equal(await odd.page.evaluate(() => document.body.dataset.model), 'gpt2');
  await odd.page.close();
  assert.deepEqual(problems, []);
  assert.deepEqual(toy.problems, []);
  assert.deepEqual(odd.problems, []);
});
