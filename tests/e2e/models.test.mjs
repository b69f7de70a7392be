// The site with a real model (issue 22): a tiny GPT-2 written by the test is loaded
// through the file chooser; the page's tokens, attention weights and next-token
// probabilities must equal the package's own forward pass in Node; the layer and head
// selectors and the model view switch what is shown; a bad file is refused with the
// engine's message while the visitor's text is kept; no axe-core violations.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { gpt2Tokenizer } from 'attnscope/tokenizer';
import { interpolateViridis } from 'd3-scale-chromatic';
import { tinyGpt2 } from '../js/support-gpt2.mjs';

const { decode, encode } = gpt2Tokenizer;
import { kToy, openDataTable, repo, useSite, waitReady, watch } from './harness.mjs';
import { axeViolations } from './learners-helpers.mjs';

const site = useSite();
const kShots = '/tmp/models-shots';
const kConfig = { layers: 2, heads: 2, dModel: 8, vocabSize: 50257, contextLength: 64 };
const kText = 'The animal didn’t cross the street because it was too tired.';
let dir;
let modelFile;
let model;
let engine;

before(async () => {
  mkdirSync(kShots, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'attnscope-models-'));
  const tiny = tinyGpt2({ ...kConfig, seed: 7 });
  modelFile = join(dir, 'tiny-gpt2.safetensors');
  writeFileSync(modelFile, tiny.bytes);
  engine = await createAttnScope();
  model = engine.loadModel(tiny.bytes);
});

/** What the visitor sees with `selector` scrolled to the top of the screen (the viewport only). */
async function shot(page, selector, name) {
  await page.$eval(selector, (el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(kShots, name) });
}

const readyNow = (page) => page.evaluate(() => Number(document.body.dataset.ready));

async function openWithModel(viewport) {
  const page = await site.browser.context.newPage();
  await page.setViewportSize(viewport);
  const problems = watch(page);
  await page.goto(site.server.url + kToy);
  await waitReady(page);
  assert.match(await page.textContent('#weights-note'), /random.*mean nothing.*GPT-2 file/is);
  // The toy's Model view: its one layer, one map per head.
  await page.click('#tab-model');
  const toyHeads = await page.$$eval('#sel-head option', (o) => o.length);
  assert.equal(await page.locator('.model-grid button.thumb').count(), toyHeads);
  await page.click('#tab-heatmap');
  await page.selectOption('#model-source', 'gpt2');
  assert.match(await page.textContent('#gpt2-box'), /never uploaded/);
  assert.match(await page.textContent('#gpt2-box'), /openai-community\/gpt2.*548 MB/s);
  let before = await readyNow(page);
  await page.setInputFiles('#gpt2-file', modelFile);
  await page.waitForSelector('#gpt2-loaded', { state: 'attached' }); // in the model's fold
  await waitReady(page, before);
  before = await readyNow(page);
  await page.fill('#text', kText);
  await waitReady(page, before);
  await page.waitForFunction(
    (n) => document.querySelectorAll('.token-strip li').length === n,
    encode(kText).length,
  );
  return { page, problems };
}

async function weightsTable(page) {
  await page.click('#tab-heatmap');
  await page.click('button[data-stage="weights"]');
  await openDataTable(page);
  return page.$$eval('#view details.data-table td', (tds) =>
    tds.map((td) => Number(td.title.replace('−', '-'))),
  );
}

test('a tiny GPT-2 from the file chooser: its tokens, weights and next-token probabilities equal the package’s', async () => {
  const { page, problems } = await openWithModel({ width: 1366, height: 768 });
  const tokens = encode(kText);
  const T = tokens.length;
  const f = model.forward({ tokens, trace: true });

  // The tokens: the text's own pieces, leading spaces shown as ␣; "’" is three bytes split
  // over two tokens, shown on the token that completes it ("…" on the first).
  const pieces = await page.$$eval('.token-strip li', (lis) => lis.map((li) => li.textContent));
  assert.equal(pieces.length, T);
  assert.deepEqual(pieces.slice(0, 6), ['The', '␣animal', '␣didn', '…', '’', 't']);
  assert.equal(pieces.map((p) => (p === '…' ? '' : p.replace(/␣/g, ' '))).join(''), kText);
  assert.ok(
    pieces.every((p) => !/[\uFFFD\u0100-\u017F]/.test(p)),
    'no replacement or byte symbols',
  );
  // The strip says what "…" stands for, and so does that token's title.
  assert.match(
    await page.textContent('#gpt2-token-count'),
    /␣: a space; …: the first bytes of a character the next token completes/,
  );
  assert.match(
    await page.getAttribute('.token-strip li:nth-child(4)', 'title'),
    /^token 4: id \d+, part of a character$/,
  );

  // Layer 1, head 1 (the default), then layer 2, head 2: the weights of the forward pass.
  for (const [layer, head] of [
    [0, 0],
    [1, 1],
  ]) {
    let before = await readyNow(page);
    if (layer !== Number(await page.inputValue('#sel-layer'))) {
      await page.selectOption('#sel-layer', String(layer));
      before = await waitReady(page, before);
    }
    await page.selectOption('#sel-head', String(head));
    const shown = await weightsTable(page);
    const expected = f.attentions[layer].data.subarray(head * T * T, (head + 1) * T * T);
    assert.equal(shown.length, T * T);
    shown.forEach((v, k) =>
      assert.ok(
        Math.abs(v - expected[k]) < 2e-6,
        `layer ${layer + 1} head ${head + 1} weight ${k}: ${v} vs ${expected[k]}`,
      ),
    );
  }
  // The worker sends a layer's Q, K and V projections once and the page keeps them: an edit
  // on layer 2 reuses the ones it holds, and going back to layer 1 brings that layer's again.
  // The reference check's worker holds them the same way (panels/verified.ts).
  const edited = `${kText} Then it slept.`;
  const g = model.forward({ tokens: encode(edited), trace: true });
  const T2 = encode(edited).length;
  for (const layer of [1, 0]) {
    let before = await readyNow(page);
    if (layer === 1) await page.fill('#text', edited);
    else await page.selectOption('#sel-layer', String(layer));
    before = await waitReady(page, before);
    // The verified panel recomputes the layer in double precision from the page's own
    // input and projections: wrong projections would show here.
    await page.waitForFunction(() => {
      const body = document.getElementById('verified-body');
      return (
        !/Checking against/.test(body?.textContent ?? '') && body?.querySelector('[data-max-rel]')
      );
    });
    const rel = Number(await page.getAttribute('#verified-body [data-max-rel]', 'data-max-rel'));
    assert.ok(rel < 1e-4, `after the edit, layer ${layer + 1} against the reference: ${rel}`);
    const shown = await weightsTable(page);
    const head = Number(await page.inputValue('#sel-head'));
    const expected = g.attentions[layer].data.subarray(head * T2 * T2, (head + 1) * T2 * T2);
    assert.equal(shown.length, T2 * T2);
    shown.forEach((v, k) =>
      assert.ok(
        Math.abs(v - expected[k]) < 2e-6,
        `after the edit, layer ${layer + 1} head ${head + 1} weight ${k}: ${v} vs ${expected[k]}`,
      ),
    );
  }
  // Back to the text and layer the checks below start from.
  let restored = await readyNow(page);
  await page.fill('#text', kText);
  restored = await waitReady(page, restored);
  await page.selectOption('#sel-layer', '1');
  await waitReady(page, restored);
  // The verified panel checks the layer's attention against the double-precision reference.
  await page.waitForSelector('#verified-body [data-max-rel]');
  const worst = Number(await page.getAttribute('#verified-body [data-max-rel]', 'data-max-rel'));
  assert.ok(worst < 1e-4, `largest relative error against the reference: ${worst}`);

  // Next-token probabilities: softmax of the forward's last logits row.
  const V = kConfig.vocabSize;
  const last = f.logits.data.subarray((T - 1) * V);
  const max = Math.max(...last);
  const sum = last.reduce((s, v) => s + Math.exp(v - max), 0);
  const best = last.indexOf(max);
  const top = await page.$eval('#next-tokens tbody tr', (tr) => ({
    token: Number(tr.dataset.token),
    p: Number(tr.querySelector('.prob').dataset.p),
  }));
  assert.equal(top.token, best);
  assert.ok(Math.abs(top.p - 1 / sum) < 1e-9, `top probability ${top.p} vs ${1 / sum}`);
  assert.equal(await page.locator('#next-tokens tbody tr').count(), 10);

  // The model view: layers × heads maps; a click and the keyboard select a layer and head.
  await page.click('#tab-model');
  assert.equal(
    await page.locator('.model-grid button.thumb').count(),
    kConfig.layers * kConfig.heads,
  );
  // Each map is one pixel per weight, viridis on 0–1 (256 steps), grey above the diagonal.
  const thumb = await page.$eval(
    '.model-grid button[aria-label="Layer 2, head 1"] canvas',
    (c) => ({
      width: c.width,
      height: c.height,
      pixels: [...c.getContext('2d').getImageData(0, 0, c.width, c.height).data],
    }),
  );
  assert.deepEqual([thumb.width, thumb.height], [T, T]);
  const layer2 = f.attentions[1].data; // head 1: its first T × T weights
  for (let i = 0; i < T; i++) {
    for (let j = 0; j < T; j++) {
      const shown = thumb.pixels.slice((i * T + j) * 4, (i * T + j) * 4 + 4);
      // The page's weights may differ from these in the last bits (as above): either step.
      const steps = [-2e-6, 2e-6].map((e) => Math.round((layer2[i * T + j] + e) * 255));
      const colors = steps.map((step) => {
        const hex = j > i ? '#8a8a8a' : interpolateViridis(step / 255);
        return [...[1, 3, 5].map((k) => parseInt(hex.slice(k, k + 2), 16)), 255].join();
      });
      assert.ok(
        colors.includes(shown.join()),
        `map layer 2 head 1, query ${i}, key ${j}: ${shown}`,
      );
    }
  }
  let before = await readyNow(page);
  await page.click('.model-grid button[aria-label="Layer 1, head 2"]');
  await waitReady(page, before);
  assert.equal(await page.inputValue('#sel-layer'), '0');
  assert.equal(await page.inputValue('#sel-head'), '1');
  await page.focus('.model-grid button[aria-label="Layer 1, head 2"]');
  await page.keyboard.press('ArrowDown');
  before = await readyNow(page);
  await page.keyboard.press('Enter');
  await waitReady(page, before);
  assert.equal(await page.inputValue('#sel-layer'), '1');
  assert.equal(
    await page.getAttribute('.model-grid button[aria-label="Layer 2, head 2"]', 'aria-pressed'),
    'true',
  );
  assert.equal(
    await page.locator('.head-search li').count(),
    2 * Math.min(5, kConfig.layers * kConfig.heads),
  );
  assert.deepEqual(await axeViolations(page), []);
  await shot(page, '#view', 'model-view-1366.png');

  // One generation step (greedy) adds the token the package's generate picks.
  const next = model.generate({ tokens, maxNewTokens: 1 }).tokens[0];
  before = await readyNow(page);
  await page.click('#gen-step');
  await waitReady(page, before);
  assert.equal(await page.inputValue('#text'), decode([...tokens, next]));

  await page.click('#tab-heatmap');
  assert.deepEqual(await axeViolations(page), []);
  await shot(page, 'body', 'heatmap-1366.png');
  await shot(page, '#next-token-box', 'next-token-1366.png');
  assert.deepEqual(problems, []);
  await page.close();
});

test('a bad file is refused with the engine’s message; the text and the loaded model stay', async () => {
  const { page, problems } = await openWithModel({ width: 390, height: 844 });
  const bytes = await readFile(modelFile);
  const bad = bytes.subarray(0, bytes.length - 100); // truncated: the last tensor runs past the end
  let message = '';
  try {
    engine.loadModel(bad);
  } catch (e) {
    message = e.message;
  }
  assert.ok(message, 'the engine refuses the truncated file');
  const badFile = join(dir, 'truncated.safetensors');
  writeFileSync(badFile, bad);
  await page.setInputFiles('#gpt2-file', badFile);
  await page.waitForSelector('#gpt2-error');
  const shown = await page.textContent('#gpt2-error');
  assert.ok(shown.includes(message), `${shown} should include ${message}`);
  assert.match(shown, /Your text is kept/);
  assert.equal(await page.inputValue('#text'), kText);
  assert.match(await page.textContent('#gpt2-loaded'), /tiny-gpt2\.safetensors/);
  assert.equal(await page.locator('.token-strip li').count(), encode(kText).length);
  assert.deepEqual(await axeViolations(page), []);
  await shot(page, '#gpt2-box', 'bad-file-390.png');
  await shot(page, '#gpt2-box', 'tokens-390.png');
  await page.click('#tab-model');
  await shot(page, '#view', 'model-view-390.png');

  // A file dropped on the chooser's box is read the same way (here: not a .safetensors at all).
  const garbage = 'this is not a safetensors file';
  let dropMessage = '';
  try {
    engine.loadModel(new TextEncoder().encode(garbage));
  } catch (e) {
    dropMessage = e.message;
  }
  assert.ok(dropMessage, 'the engine refuses the garbage file');
  await page.evaluate((text) => {
    const data = new DataTransfer();
    data.items.add(new File([text], 'dropped.safetensors'));
    document
      .querySelector('.drop-zone')
      .dispatchEvent(
        new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }),
      );
  }, garbage);
  await page.waitForFunction(
    (m) => document.getElementById('gpt2-error')?.textContent.includes(m),
    dropMessage,
  );
  assert.equal(await page.inputValue('#text'), kText);

  // Back to the toy: its honest note returns and the toy computes again.
  const before = await readyNow(page);
  await page.selectOption('#model-source', 'toy');
  await waitReady(page, before);
  assert.match(await page.textContent('#weights-note'), /random/i);
  assert.equal(await page.$('.token-strip'), null);
  assert.deepEqual(problems, []);
  await page.close();
});
