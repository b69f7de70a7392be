// Bad input at the site's doors: hostile or oversized links, malformed weights
// files, extreme cell edits, 1 MB of pasted text, 10 000 tokens, d_model 0 and
// heads 17. Each gets a clear message (or a visibly clamped value), the page
// keeps working, and the visitor's text and settings survive refusals.
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { after, before, test } from 'node:test';

import { launch, startServer, waitReady } from './harness.mjs';
import { assertStillWorks, change, linkFor, openPage } from './robustness-helpers.mjs';

let server;
let browser;
before(async () => {
  server = await startServer();
  browser = await launch();
});
after(async () => {
  await browser?.close();
  server?.stop();
});

const errorText = (page) => page.textContent('#error');
const settings = (page) => page.evaluate(() => Object.fromEntries(['text', 'dModel', 'dK', 'dV', 'heads', 'seed', 'mask'].map((id) => [id, document.getElementById(id).value])));

async function setNumber(page, id, value) {
  return change(page, async () => {
    await page.fill(`#${id}`, String(value));
    await page.press(`#${id}`, 'Tab');
  });
}

test('URL: oversized, non-JSON and out-of-range links are refused or clamped with a message', async () => {
  // Larger than the fragment limit: refused before decoding.
  const big = await openPage(browser, server, `#s=${'A'.repeat(300_000)}`);
  assert.match(await errorText(big.page), /too large/);
  await assertStillWorks(big.page);
  assert.deepEqual(big.problems, []);
  await big.page.close();

  // Valid deflate around text that is not JSON.
  const notJson = await openPage(browser, server, `#s=${deflateRawSync(Buffer.from('{"text": "unterminated')).toString('base64url')}`);
  assert.match(await errorText(notJson.page), /not valid JSON/);
  await assertStillWorks(notJson.page);
  await notJson.page.close();

  // A deflate bomb: 50 MB of spaces in a 50 KB link.
  const bomb = await openPage(browser, server, `#s=${deflateRawSync(Buffer.alloc(50_000_000, 0x20)).toString('base64url')}`);
  assert.match(await errorText(bomb.page), /could not be read|too large/);
  await assertStillWorks(bomb.page);
  await bomb.page.close();

  // Well-formed JSON with hostile values: clamped to the page's limits.
  const { state } = await import('./robustness-helpers.mjs').then((m) => m.appModules());
  const raw = { ...state.defaultState(), text: 'clamped link', dModel: 0, heads: 17, dK: 1e308, hidden: -5, seed: 'x', temperature: -1, mask: '<b>', edits: { 'wq:0,0': 'NaN', 'wq:0,1': 1e999 } };
  const hash = `#s=${deflateRawSync(Buffer.from(JSON.stringify(raw))).toString('base64url')}`;
  const hostile = await openPage(browser, server, hash);
  const s = await settings(hostile.page);
  assert.deepEqual([s.text, s.dModel, s.heads, s.dK, s.mask], ['clamped link', '1', '16', '256', 'none']);
  assert.match(await hostile.page.textContent('#status-text'), /d_model=1, heads=16/);
  await assertStillWorks(hostile.page);
  assert.deepEqual(hostile.problems, []);
  await hostile.page.close();
});

test('JSON import: malformed, hostile and oversized files are refused; text and settings kept', async () => {
  const { page, problems } = await openPage(browser, server, await linkFor({ text: 'my own sentence stays', seed: 5, mask: 'causal' }));
  const kept = await settings(page);
  const refuse = async (name, body, message) => {
    await page.evaluate(() => { const e = document.getElementById('error'); e.hidden = true; e.textContent = ''; });
    await page.setInputFiles('#import-weights', { name, mimeType: 'application/json', buffer: Buffer.isBuffer(body) ? body : Buffer.from(body) });
    const t0 = Date.now();
    await page.waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: 60_000 }).catch((e) => {
      throw new Error(`${name}: no message after ${Date.now() - t0} ms (${e.message})`);
    });
    assert.match(await errorText(page), message, name);
    assert.deepEqual(await settings(page), kept, `settings changed by ${name}`);
  };
  await refuse('empty.json', '', /not valid JSON/);
  await refuse('text.json', 'hello, not json', /not valid JSON/);
  await refuse('null.json', 'null', /JSON object/);
  await refuse('array.json', '[[1, 2], [3, 4]]', /JSON object/);
  await refuse('none.json', '{"format": "attnscope-weights"}', /no weight matrix/);
  await refuse('ragged.json', JSON.stringify({ dModel: 2, dK: 1, heads: 1, wq: [[1], [2, 3]] }), /wq must be a 2×1 array of finite numbers/);
  await refuse('nan.json', JSON.stringify({ dModel: 1, dK: 1, heads: 1, wq: [['NaN']] }), /wq must be a 1×1 array of finite numbers/);
  await refuse('huge-dims.json', JSON.stringify({ dModel: 512, dK: 256, heads: 16, hidden: 2048, wq: [], w1: [] }), /too many values/);
  await refuse('deep.json', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, /JSON object|not valid JSON/);
  await refuse('big.json', Buffer.alloc(21_000_000, 0x20), /larger than 20 MB/);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('cell edits: values that overflow float are rejected by the engine with a message, then cleared', async () => {
  const { page, problems } = await openPage(browser, server);
  await page.selectOption('#edit-matrix', 'wq');
  // 1e39 is a finite double but not a float: the engine refuses it by name.
  await page.fill('#edit-value', '1e39');
  await page.press('#edit-value', 'Enter');
  await page.waitForFunction(() => !document.getElementById('error').hidden);
  assert.match(await errorText(page), /rejected this input: .*(wq|non-finite|inf)/i);
  assert.match(await page.inputValue('#text'), /animal/);
  // 3e38 is a float, but the scores it makes would overflow.
  await page.fill('#edit-value', '3e38');
  await page.press('#edit-value', 'Enter');
  await page.waitForFunction(() => /overflow/.test(document.getElementById('error').textContent));
  // Clearing the edits brings the page back.
  const readyBefore = await page.evaluate(() => Number(document.body.dataset.ready));
  await page.click('#clear-edits');
  await waitReady(page, readyBefore);
  assert.equal(await page.isHidden('#error'), true);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('1 MB of pasted text: cut to the page limit with a message; the page stays usable', async () => {
  const { page, problems } = await openPage(browser, server);
  const mb = 'attention is all you need. '.repeat(40_000); // 1.08 MB
  const t0 = Date.now();
  await change(page, () => page.fill('#text', mb));
  const ms = Date.now() - t0;
  const text = await page.inputValue('#text');
  assert.equal(text, mb.slice(0, text.length), 'the kept text is not the start of the pasted text');
  assert.ok(text.length >= 10_000, `only ${text.length} characters kept`);
  assert.match(await page.textContent('#token-count'), /cut/i);
  assert.match(await page.textContent('#status-text'), /Computed by the engine/);
  console.log(`# 1 MB paste: ${ms} ms to a result, ${text.length} characters kept`);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('10 000 tokens: one sentence is cut with a message; many sentences are refused with a message', async () => {
  const { page, problems } = await openPage(browser, server);
  await change(page, () => page.fill('#text', 'a '.repeat(10_000)));
  const count = await page.textContent('#token-count');
  assert.match(count, /^1024 tokens/);
  assert.match(count, /cut/i);
  // Ten sentences of 1 000 tokens: more scores than the page keeps; refused by size.
  await page.fill('#text', Array.from({ length: 10 }, () => 'b '.repeat(999)).join('\n'));
  await page.waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: 60_000 });
  assert.match(await errorText(page), /attention scores per step .* Use fewer heads, tokens or sentences/);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('d_model 0 and heads 17 are clamped to the limits, visibly', async () => {
  const { page, problems } = await openPage(browser, server);
  await setNumber(page, 'dModel', 0);
  assert.equal(await page.inputValue('#dModel'), '1');
  assert.match(await page.textContent('#status-text'), /d_model=1,/);
  await setNumber(page, 'heads', 17);
  assert.equal(await page.inputValue('#heads'), '16');
  assert.match(await page.textContent('#status-text'), /heads=16,/);
  // The fields say what they accept.
  assert.deepEqual(await page.evaluate(() => [dModel.min, dModel.max, heads.min, heads.max]), ['1', '512', '1', '16']);
  await setNumber(page, 'dModel', -1e308);
  assert.equal(await page.inputValue('#dModel'), '1');
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});
