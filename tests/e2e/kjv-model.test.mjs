// The model the site ships (models/kjv/): chosen in the model picker, it loads from the
// site itself with its own tokenizer; the page's tokens and next-token choice equal the
// package's in Node; going back to the toy works; no axe-core violations.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { bpeTokenizer } from 'attnscope/bpe-tokenizer';

import { kToy, repo, useSite, waitReady, watch } from './harness.mjs';
import { axeViolations } from './learners-helpers.mjs';

const site = useSite();
const kText = 'And God said, Let there be light: and there was';
let tokenizer;
let model;

before(async () => {
  tokenizer = bpeTokenizer(
    JSON.parse(readFileSync(join(repo, 'models/kjv/tokenizer.json'), 'utf8')),
  );
  const engine = await createAttnScope();
  model = engine.loadModel(readFileSync(join(repo, 'models/kjv/model.safetensors')));
});

test('the shipped KJV model: its own tokens, the package’s next token, and back to the toy', async () => {
  const page = await site.browser.context.newPage();
  await page.setViewportSize({ width: 1366, height: 768 });
  const problems = watch(page);
  await page.goto(site.server.url + kToy);
  await waitReady(page);
  let before = await waitReady(page);
  await page.selectOption('#model-source', 'kjv');
  await page.waitForSelector('#gpt2-loaded', { state: 'attached' }); // in the model's fold
  assert.match(await page.textContent('#kjv-about'), /King James Bible/);
  assert.match(
    await page.textContent('#gpt2-loaded'),
    /4 layers × 4 heads, d_model 128, vocabulary 4,096/,
  );
  before = await waitReady(page, before);
  await page.fill('#text', kText);
  await waitReady(page, before);
  const tokens = tokenizer.encode(kText);
  await page.waitForFunction(
    (n) => document.querySelectorAll('.token-strip li').length === n,
    tokens.length,
  );
  const pieces = await page.$$eval('.token-strip li', (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(
    pieces,
    tokenizer.pieces(kText).map((p) => p.text.replace(/ /g, '␣')),
  );
  // The top next token is the forward pass's argmax after the last token.
  const V = model.config.vocabSize;
  const last = model
    .forward({ tokens, trace: false })
    .logits.data.subarray((tokens.length - 1) * V);
  const best = last.indexOf(Math.max(...last));
  const top = await page.$eval('#next-tokens tbody tr', (tr) => Number(tr.dataset.token));
  assert.equal(top, best, `the page's top token ${top} (${tokenizer.decode([top])}) vs ${best}`);
  assert.deepEqual(await axeViolations(page), []);

  before = await page.evaluate(() => Number(document.body.dataset.ready));
  await page.selectOption('#model-source', 'toy');
  await waitReady(page, before);
  assert.equal(await page.evaluate(() => document.body.dataset.model), 'toy');
  assert.equal(await page.inputValue('#text'), kText);
  assert.deepEqual(problems, []);
  await page.close();
});
