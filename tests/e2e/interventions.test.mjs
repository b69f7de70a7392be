// The GPT-2 analysis panels with a tiny GPT-2 written by the test: interventions
// (ablate a head, mask a token by its chip, replace a pattern) give the next-token
// probabilities and attention changes the package's own forward gives in Node; the
// attribution map shows the package's rollout and value norms; the logit lens table holds
// the package's top tokens. Keyboard use, axe-core, screenshots at 1366×768 and 390×844.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { gpt2Tokenizer } from 'attnscope/tokenizer';
import { tinyGpt2 } from '../js/support-gpt2.mjs';
import { kToy, useSite, waitReady, watch } from './harness.mjs';
import { axeViolations, kLaptop, kPhone } from './learners-helpers.mjs';

const site = useSite();
const kShots = '/tmp/interventions-shots';
const kConfig = { layers: 2, heads: 2, dModel: 8, vocabSize: 50257, contextLength: 32 };
const kText = 'The cat sat on the mat because it was tired.';
const tokens = gpt2Tokenizer.encode(kText);
const T = tokens.length;
let modelFile;
let model;

before(async () => {
  mkdirSync(kShots, { recursive: true });
  const dir = mkdtempSync(join(tmpdir(), 'attnscope-interventions-'));
  const tiny = tinyGpt2({ ...kConfig, seed: 11 });
  modelFile = join(dir, 'tiny-gpt2.safetensors');
  writeFileSync(modelFile, tiny.bytes);
  const engine = await createAttnScope();
  model = engine.loadModel(tiny.bytes);
});

const analysed = (page) =>
  page.evaluate(() => Number(document.querySelector('.interventions')?.dataset.analysed ?? 0));

/** Runs `action` and waits for the analysis that follows it. */
async function thenAnalysed(page, action) {
  const n = await analysed(page);
  await action();
  await page.waitForFunction(
    (k) => Number(document.querySelector('.interventions')?.dataset.analysed ?? 0) > k,
    n,
    { timeout: 60_000 },
  );
}

async function openWithModel(viewport) {
  const page = await site.browser.context.newPage();
  await page.setViewportSize(viewport);
  const problems = watch(page);
  await page.goto(site.server.url + kToy);
  await waitReady(page);
  await page.selectOption('#model-source', 'gpt2');
  let ready = Number(await page.evaluate(() => document.body.dataset.ready));
  await page.setInputFiles('#gpt2-file', modelFile);
  await page.waitForSelector('#gpt2-loaded', { state: 'attached' }); // in the model's fold
  ready = await waitReady(page, ready);
  await thenAnalysed(page, async () => {
    await page.fill('#text', kText);
    await waitReady(page, ready);
  });
  return { page, problems };
}

/** softmax of the last row of `logits`. */
function lastProbabilities(logits) {
  const V = kConfig.vocabSize;
  const last = logits.subarray((T - 1) * V);
  const max = Math.max(...last);
  const sum = last.reduce((s, v) => s + Math.exp(v - max), 0);
  return (id) => Math.exp(last[id] - max) / sum;
}

/** The next-token table's rows: token, without, with. */
const nextRows = (page) =>
  page.$$eval('#iv-next tbody tr', (trs) =>
    trs.map((tr) => ({
      token: Number(tr.dataset.token),
      before: Number(tr.querySelector('.before').dataset.p),
      after: Number(tr.querySelector('.after').dataset.p),
    })),
  );

async function expectNext(page, interventions) {
  const clean = lastProbabilities(model.forward({ tokens }).logits.data);
  const changed = lastProbabilities(model.forward({ tokens, interventions }).logits.data);
  const rows = await nextRows(page);
  assert.ok(rows.length >= 5);
  for (const r of rows) {
    assert.ok(Math.abs(r.before - clean(r.token)) < 1e-7, `token ${r.token} without`);
    assert.ok(
      Math.abs(r.after - changed(r.token)) < 1e-7,
      `token ${r.token} with: ${r.after} vs ${changed(r.token)}`,
    );
  }
}

const maxAbs = (data) => data.reduce((m, v) => Math.max(m, Math.abs(v)), 0);
const mapMax = (page, id) => page.$eval(id, (c) => Number(c.dataset.max));

test('interventions, attribution and the logit lens show the package’s numbers', async () => {
  const { page, problems } = await openWithModel(kLaptop);
  assert.match(await page.textContent('#iv-none'), /No intervention/);
  assert.equal(await page.$('#iv-next'), null);

  // Ablate layer 1 head 2 (zero), chosen with the layer and head selectors.
  await page.selectOption('#sel-head', '1');
  await thenAnalysed(page, () => page.click('#iv-ablate'));
  const ablate = [{ layer: 0, head: 1, mode: 'zero' }];
  await expectNext(page, { ablate });
  assert.match(await page.textContent('#iv-list'), /ablate layer 1 head 2 \(zero\)/);

  // Mask the third token by its chip, with the keyboard.
  await page.focus('.iv-mask button[data-pos="2"]');
  await thenAnalysed(page, () => page.keyboard.press('Enter'));
  assert.equal(await page.getAttribute('.iv-mask button[data-pos="2"]', 'aria-pressed'), 'true');
  const maskTokens = [2];
  await expectNext(page, { ablate, maskTokens });

  // Layer 2 head 1 takes the pattern of layer 1 head 1.
  let ready = Number(await page.evaluate(() => document.body.dataset.ready));
  await thenAnalysed(page, async () => {
    await page.selectOption('#sel-layer', '1');
    ready = await waitReady(page, ready);
  });
  await page.selectOption('#sel-head', '0');
  await page.selectOption('#iv-from-layer', '0');
  await page.selectOption('#iv-from-head', '0');
  await thenAnalysed(page, () => page.click('#iv-replace'));
  const interventions = {
    ablate,
    maskTokens,
    replace: [{ layer: 1, head: 0, from: { layer: 0, head: 0 } }],
  };
  await expectNext(page, interventions);
  const f = model.forward({ tokens, interventions, attribution: true, logitLens: { topK: 1 } });
  const headSlice = (t, h) => t.data.subarray(h * T * T, (h + 1) * T * T);
  const wantDiff = maxAbs(headSlice(f.diff.attentions[1], 0));
  assert.ok(wantDiff > 1e-3, 'the replaced head changed');
  assert.ok(Math.abs((await mapMax(page, '#iv-diff-map')) - wantDiff) < 1e-6);
  assert.deepEqual(await axeViolations(page), []);
  await page.$eval('.interventions', (el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(kShots, 'interventions-1366.png') });

  // Attribution: raw, rollout and value norms of layer 2 (head 1), with the interventions,
  // computed once the panel is opened (from the keyboard).
  await page.focus('#attribution-h');
  await thenAnalysed(page, () => page.keyboard.press('Enter'));
  const attribution = [
    ['raw', maxAbs(headSlice(f.attentions[1], 0))],
    ['rollout', maxAbs(f.attribution.rollout[1].data)],
    ['valueNorms', maxAbs(headSlice(f.attribution.valueNorms[1], 0))],
  ];
  for (const [mode, want] of attribution) {
    await page.check(`input[name="attribution"][value="${mode}"]`);
    await page.waitForFunction(
      ([w]) => Math.abs(Number(document.getElementById('attribution-map').dataset.max) - w) < 1e-6,
      [want],
    );
  }

  // The logit lens: every cell is the package's top token; the last layer the model's own.
  await thenAnalysed(page, () => page.click('#logit-lens-h'));
  const cells = await page.$$eval('#logit-lens tbody td', (tds) =>
    tds.map((td) => Number(td.dataset.token)),
  );
  assert.deepEqual(cells, Array.from(f.logitLens.ids.data));
  const V = kConfig.vocabSize;
  for (let t = 0; t < T; t++) {
    const row = f.logits.data.subarray(t * V, (t + 1) * V);
    assert.equal(cells[(kConfig.layers - 1) * T + t], row.indexOf(Math.max(...row)));
  }
  await page.$eval('.attribution', (el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(kShots, 'attribution-1366.png') });

  // Remove all: no change left to show.
  await thenAnalysed(page, () => page.click('#iv-clear'));
  assert.match(await page.textContent('#iv-none'), /No intervention/);
  assert.equal(await page.$('#iv-next'), null);
  assert.deepEqual(problems, []);
  await page.close();
});

test('the analysis panels on a phone: usable and without axe violations', async () => {
  const { page, problems } = await openWithModel(kPhone);
  await thenAnalysed(page, () => page.click('.iv-mask button[data-pos="0"]'));
  await expectNext(page, { maskTokens: [0] });
  assert.deepEqual(await axeViolations(page), []);
  await page.$eval('.interventions', (el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(kShots, 'interventions-390.png') });
  // A shorter text drops the mask of a position it no longer has.
  await thenAnalysed(page, () => page.click(`.iv-mask button[data-pos="${T - 1}"]`));
  assert.equal(await page.locator('#iv-list li').count(), 2);
  const short = 'The cat sat';
  let ready = Number(await page.evaluate(() => document.body.dataset.ready));
  await thenAnalysed(page, async () => {
    await page.fill('#text', short);
    ready = await waitReady(page, ready);
  });
  assert.equal(await page.locator('#iv-list li').count(), 1);
  const shortTokens = gpt2Tokenizer.encode(short);
  const V = kConfig.vocabSize;
  const want = model.forward({ tokens: shortTokens, interventions: { maskTokens: [0] } }).logits
    .data;
  const rows = await nextRows(page);
  const last = want.subarray((shortTokens.length - 1) * V);
  const max = Math.max(...last);
  const sum = last.reduce((s, v) => s + Math.exp(v - max), 0);
  for (const r of rows) assert.ok(Math.abs(r.after - Math.exp(last[r.token] - max) / sum) < 1e-7);
  await thenAnalysed(page, () => page.click('#logit-lens-h'));
  await page.waitForSelector('#logit-lens');
  await page.$eval('.logit-lens', (el) => el.scrollIntoView({ block: 'start' }));
  await page.screenshot({ path: join(kShots, 'logit-lens-390.png') });
  assert.deepEqual(problems, []);
  await page.close();
});
