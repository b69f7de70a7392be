// Bad input at the site's doors: hostile or oversized links, malformed weights
// files, extreme cell edits, 1 MB of pasted text, 10 000 tokens, d_model 0 and
// heads 17. Each gets a clear message (or a clamped value with a note naming the
// limit), the page keeps working, and the visitor's text and settings survive:
// the text box keeps everything typed, only the computed part is limited.
// Long work shows which step runs and for how long.
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { test } from 'node:test';

import { useSite, waitReady } from './harness.mjs';
import { appModules, assertStillWorks, change, linkFor, openPage } from './robustness-helpers.mjs';

const site = useSite();

const errorText = (page) => page.textContent('#error');
const settings = (page) =>
  page.evaluate(() =>
    Object.fromEntries(
      ['text', 'dModel', 'dK', 'dV', 'heads', 'seed', 'mask'].map((id) => [
        id,
        document.getElementById(id).value,
      ]),
    ),
  );

async function setNumber(page, id, value) {
  return change(page, async () => {
    await page.fill(`#${id}`, String(value));
    await page.press(`#${id}`, 'Tab');
  });
}

test('URL: oversized, non-JSON and out-of-range links are refused or clamped with a message', async () => {
  // Larger than the fragment limit: refused before decoding.
  const big = await openPage(site.browser, site.server, `#s=${'A'.repeat(300_000)}`);
  assert.match(await errorText(big.page), /too large/);
  await assertStillWorks(big.page);
  assert.deepEqual(big.problems, []);
  await big.page.close();

  // Valid deflate around text that is not JSON.
  const notJson = await openPage(
    site.browser,
    site.server,
    `#s=${deflateRawSync(Buffer.from('{"text": "unterminated')).toString('base64url')}`,
  );
  assert.match(await errorText(notJson.page), /not valid JSON/);
  await assertStillWorks(notJson.page);
  await notJson.page.close();

  // A deflate bomb: 50 MB of spaces in a 50 KB link.
  const bomb = await openPage(
    site.browser,
    site.server,
    `#s=${deflateRawSync(Buffer.alloc(50_000_000, 0x20)).toString('base64url')}`,
  );
  assert.match(await errorText(bomb.page), /could not be read|too large/);
  await assertStillWorks(bomb.page);
  await bomb.page.close();

  // Well-formed JSON with hostile values: clamped to the page's limits.
  const { state } = await import('./robustness-helpers.mjs').then((m) => m.appModules());
  const raw = {
    ...state.defaultState('toy'),
    text: 'clamped link',
    dModel: 0,
    heads: 17,
    dK: 1e308,
    hidden: -5,
    seed: 'x',
    temperature: -1,
    mask: '<b>',
    edits: { 'wq:0,0': 'NaN', 'wq:0,1': 1e999 },
  };
  const hash = `#s=${deflateRawSync(Buffer.from(JSON.stringify(raw))).toString('base64url')}`;
  const hostile = await openPage(site.browser, site.server, hash);
  const s = await settings(hostile.page);
  assert.deepEqual(
    [s.text, s.dModel, s.heads, s.dK, s.mask],
    ['clamped link', '1', '16', '256', 'none'],
  );
  assert.match(await hostile.page.textContent('#status-text'), /d_model=1, heads=16/);
  // Each clamped field says so, next to it.
  assert.equal(await hostile.page.textContent('#dModel-note'), 'd_model must be 1–512; using 1');
  assert.equal(await hostile.page.textContent('#heads-note'), 'heads must be 1–16; using 16');
  assert.equal(await hostile.page.textContent('#hidden-note'), 'hidden must be 1–2,048; using 1');
  assert.equal(await hostile.page.isHidden('#dV-note'), true, 'd_v was not in the link: no note');
  await assertStillWorks(hostile.page);
  assert.deepEqual(hostile.problems, []);
  await hostile.page.close();
});

test('JSON import: malformed, hostile and oversized files are refused; text and settings kept', async () => {
  const { page, problems } = await openPage(
    site.browser,
    site.server,
    await linkFor({ text: 'my own sentence stays', seed: 5, mask: 'causal' }),
  );
  const kept = await settings(page);
  const refuse = async (name, body, message) => {
    await page.evaluate(() => {
      const e = document.getElementById('error');
      e.hidden = true;
      e.textContent = '';
    });
    await page.setInputFiles('#import-weights', {
      name,
      mimeType: 'application/json',
      buffer: Buffer.isBuffer(body) ? body : Buffer.from(body),
    });
    const t0 = Date.now();
    await page
      .waitForFunction(() => !document.getElementById('error').hidden, null, { timeout: 60_000 })
      .catch((e) => {
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
  await refuse(
    'ragged.json',
    JSON.stringify({ dModel: 2, dK: 1, heads: 1, wq: [[1], [2, 3]] }),
    /wq must be a 2×1 array of finite numbers/,
  );
  await refuse(
    'nan.json',
    JSON.stringify({ dModel: 1, dK: 1, heads: 1, wq: [['NaN']] }),
    /wq must be a 1×1 array of finite numbers/,
  );
  await refuse(
    'huge-dims.json',
    JSON.stringify({ dModel: 512, dK: 256, heads: 16, hidden: 2048, wq: [], w1: [] }),
    /too many values/,
  );
  await refuse(
    'deep.json',
    `${'['.repeat(100_000)}${']'.repeat(100_000)}`,
    /JSON object|not valid JSON/,
  );
  await refuse('big.json', Buffer.alloc(21_000_000, 0x20), /larger than 20 MB/);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('cell edits: values that overflow float are rejected by the engine with a message, then cleared', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  await page.click('.editor-box summary'); // the editor is folded away until asked for
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

/** Words of random letters (a fixed LCG): text that deflate cannot shrink much. */
function randomWords(chars, seed = 1) {
  let x = seed;
  let out = '';
  while (out.length < chars) {
    let w = '';
    for (let i = 0; i < 8; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      w += String.fromCharCode(97 + ((x >>> 24) % 26));
    }
    out += `${w} `;
  }
  return out;
}

const hashText = async (page) =>
  (await (await appModules()).urlState.decodeState(new URL(page.url()).hash))?.text;

/** Waits until the address bar's state holds `text` (the link is written shortly after a change). */
async function waitForHashText(page, text) {
  for (let i = 0; i < 100; i++) {
    if ((await hashText(page)) === text) return;
    await page.waitForTimeout(100);
  }
  assert.equal(
    (await hashText(page))?.length,
    text.length,
    'the link does not hold the expected text',
  );
}

test('1 MB of pasted text: all of it stays in the box and in the link; the computed part is named', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  const mb = 'attention is all you need. '.repeat(40_000); // 1.08 MB, 240 000 tokens
  const t0 = Date.now();
  await change(page, () => page.fill('#text', mb));
  const ms = Date.now() - t0;
  assert.equal((await page.inputValue('#text')).length, mb.length, 'the text box lost characters');
  assert.equal(await page.inputValue('#text'), mb);
  assert.match(
    await page.textContent('#token-count'),
    /^1024 tokens\. .* Computing 1,024 of 240,000 tokens \(at most 1,024 tokens per sentence\); the rest is kept in the box\.$/,
  );
  assert.match(await page.textContent('#status-text'), /Computed by the engine.* T=1024,/);
  console.log(`# 1 MB paste: ${ms} ms to a result, ${mb.length} characters kept`);
  // This text compresses well: the link holds all of it, and opening it restores all of it.
  await waitForHashText(page, mb);
  assert.equal(await page.isHidden('#link-note'), true);
  const reopened = await openPage(site.browser, site.server, new URL(page.url()).hash);
  assert.equal(await reopened.page.inputValue('#text'), mb);
  await reopened.page.close();
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('text too long for a link: the link holds the computed part and says so; the box keeps all', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  const text = randomWords(300_000).trim(); // ~33 000 tokens of random letters: ~240 000 characters once compressed
  const { tokenize } = await appModules();
  await change(page, () => page.fill('#text', text));
  assert.equal(await page.inputValue('#text'), text);
  const note = page.locator('#link-note');
  await note.waitFor({ state: 'visible' });
  assert.equal(await note.getAttribute('role'), 'status');
  const computed = tokenize.computedText(text);
  assert.equal(computed, text.slice(0, computed.length));
  assert.match(
    await note.textContent(),
    new RegExp(
      `too long for a link: the link holds only the ${computed.length.toLocaleString('en')} characters that are computed, of ${text.length.toLocaleString('en')}\\. The text box keeps everything`,
    ),
  );
  await waitForHashText(page, computed);
  // The link gives the same tokens, hence the same result.
  assert.deepEqual(tokenize.splitSentences(await hashText(page)), tokenize.splitSentences(text));
  // A short text fits again: the note goes away once the link is written, which
  // follows the painted result (writeLink compresses the state first).
  await assertStillWorks(page);
  await note.waitFor({ state: 'hidden', timeout: 5000 });
  assert.deepEqual(problems, []);
  await page.close();
});

test('10 000 tokens and 20 sentences: the computed part is named, the text kept; too many scores are refused', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  const tokens = 'a '.repeat(10_000);
  await change(page, () => page.fill('#text', tokens));
  const count = await page.textContent('#token-count');
  assert.match(count, /^1024 tokens/);
  assert.match(
    count,
    /Computing 1,024 of 10,000 tokens \(at most 1,024 tokens per sentence\); the rest is kept in the box/,
  );
  assert.equal(await page.inputValue('#text'), tokens);
  // Editing a chip changes that token only; the tokens beyond the computed part stay.
  await page.click('#chips button.chip >> nth=0');
  await change(page, async () => {
    await page.fill('#chips input.chip', 'z');
    await page.press('#chips input.chip', 'Enter');
  });
  assert.equal(await page.inputValue('#text'), `z ${'a '.repeat(9_999)}`);
  // Twenty sentences: the first sixteen are computed.
  const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`).join('\n');
  await change(page, () => page.fill('#text', lines));
  // A run of the chip edit may still end after that wait began: wait for the new text's own run
  // (its batch in the status), up to a timeout, then check every text.
  await page
    .waitForFunction(() => /B=16, T=2,/.test(document.getElementById('status-text')?.textContent))
    .catch(() => {});
  assert.match(
    await page.textContent('#token-count'),
    /^32 tokens in 16 sentences .* Computing 32 of 40 tokens \(the first 16 of 20 sentences\); the rest is kept in the box\.$/,
  );
  assert.equal(await page.inputValue('#text'), lines);
  assert.match(await page.textContent('#status-text'), /B=16, T=2,/);
  // Ten sentences of 1 000 tokens: more scores than the page keeps; refused by size, text kept.
  const ten = Array.from({ length: 10 }, () => 'b '.repeat(999)).join('\n');
  await page.fill('#text', ten);
  await page.waitForFunction(() => !document.getElementById('error').hidden, null, {
    timeout: 60_000,
  });
  assert.match(
    await errorText(page),
    /attention scores per step .* Use fewer heads, tokens or sentences/,
  );
  assert.equal(await page.inputValue('#text'), ten);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('d_model 0 and heads 17 are clamped with a note naming the limit; other settings are kept', async () => {
  const { page, problems } = await openPage(
    site.browser,
    site.server,
    await linkFor({ text: 'my settings stay', seed: 7, mask: 'causal', dK: 4 }),
  );
  await setNumber(page, 'dModel', 0);
  assert.equal(await page.inputValue('#dModel'), '1');
  assert.match(await page.textContent('#status-text'), /d_model=1,/);
  assert.equal(await page.textContent('#dModel-note'), 'd_model must be 1–512; using 1');
  await setNumber(page, 'heads', 17);
  assert.equal(await page.inputValue('#heads'), '16');
  assert.match(await page.textContent('#status-text'), /heads=16,/);
  assert.equal(await page.textContent('#heads-note'), 'heads must be 1–16; using 16');
  // The notes are announced and tied to their fields.
  assert.deepEqual(
    await page.evaluate(() => [
      heads.getAttribute('aria-describedby'),
      document.getElementById('heads-note').getAttribute('role'),
    ]),
    ['heads-note', 'status'],
  );
  assert.equal(
    await page.isVisible('#dModel-note'),
    true,
    'the d_model note went away when heads changed',
  );
  // Everything else the visitor chose is still there.
  const s = await settings(page);
  assert.deepEqual([s.text, s.seed, s.mask, s.dK], ['my settings stay', '7', 'causal', '4']);
  // The fields say what they accept.
  assert.deepEqual(await page.evaluate(() => [dModel.min, dModel.max, heads.min, heads.max]), [
    '1',
    '512',
    '1',
    '16',
  ]);
  await setNumber(page, 'dModel', -1e308);
  assert.equal(await page.inputValue('#dModel'), '1');
  assert.equal(await page.textContent('#dModel-note'), 'd_model must be 1–512; using 1');
  await setNumber(page, 'dK', 2.5);
  assert.equal(await page.textContent('#dK-note'), 'd_k must be a whole number 1–256; using 3');
  await change(page, () => page.selectOption('#scaleMode', 'temperature'));
  await setNumber(page, 'temperature', -2);
  assert.equal(
    await page.textContent('#temperature-note'),
    'temperature must be above 0 and at most 1,000,000; using 1',
  );
  // An in-range value clears its note.
  await setNumber(page, 'heads', 4);
  assert.equal(await page.isHidden('#heads-note'), true);
  assert.equal(await page.textContent('#status-text').then((t) => /heads=4,/.test(t)), true);
  await assertStillWorks(page);
  assert.deepEqual(problems, []);
  await page.close();
});

test('long work: the step under way and the reference check are named, with the time elapsed', async () => {
  // 512 tokens, 8 heads of width 64 and positional encoding: the double-precision
  // reference check alone takes well over 300 ms even on a fast machine. The page
  // opens on it, and the run recorded below is the one that adds the block.
  const text = Array.from({ length: 512 }, (_, i) => `w${i % 97}`).join(' ');
  const hash = await linkFor({ text, dModel: 512, dK: 64, dV: 64, heads: 8, positional: true });
  const { page, problems } = await openPage(site.browser, site.server, hash);
  assert.equal(await page.getAttribute('#step-text', 'role'), 'status');
  const allDone = /^All 4 steps done in \d+\.\d s\.$/;
  // The opening run's reference check ends after the page counts as ready.
  await page.waitForFunction(
    (re) => new RegExp(re).test(document.getElementById('step-text').textContent),
    allDone.source,
    { timeout: 60_000 },
  );
  // Record every text the step line and the elapsed time show from now on.
  await page.evaluate(() => {
    window.__steps = [];
    window.__elapsed = [];
    const text = document.getElementById('step-text');
    const elapsed = document.getElementById('step-elapsed');
    new MutationObserver(() => window.__steps.push(text.textContent)).observe(text, {
      childList: true,
      characterData: true,
      subtree: true,
    });
    new MutationObserver(() => window.__elapsed.push(elapsed.textContent)).observe(elapsed, {
      childList: true,
      characterData: true,
      subtree: true,
    });
  });
  await change(page, () => page.check('#block'));
  await page.waitForFunction(
    (re) => window.__steps.some((t) => new RegExp(re).test(t)),
    allDone.source,
    { timeout: 60_000 },
  );
  // The progress shows once a run has taken 300 ms, with the step under way then;
  // steps that end sooner (the positional encoding) may never be named.
  const all = await page.evaluate(() => window.__steps.filter((t) => t && !t.startsWith('All ')));
  for (const t of all) assert.match(t, /^Step [1-4] of [2-4]: .+…$/);
  const steps = all.filter((t) => / of 4: /.test(t));
  const named = [
    'positional encoding',
    'adding position to the embeddings',
    'transformer block',
    'checking against the double-precision reference',
  ];
  const order = steps.map((t) => {
    const m = /^Step (\d) of 4: (.+)…$/.exec(t);
    assert.ok(m && named[Number(m[1]) - 1] === m[2], `unexpected step text: ${t}`);
    return Number(m[1]);
  });
  assert.deepEqual(order, [...order].sort(), `steps out of order: ${steps.join(' | ')}`);
  assert.ok(
    steps.includes('Step 4 of 4: checking against the double-precision reference…'),
    `shown: ${steps.join(' | ')}`,
  );
  const elapsed = await page.evaluate(() => window.__elapsed.filter((t) => t));
  assert.ok(
    elapsed.length > 0 && elapsed.every((t) => /^\d+\.\d s$/.test(t)),
    `elapsed: ${elapsed.join(' | ')}`,
  );
  assert.match(await page.textContent('#status-text'), /T=512, d_model=512, heads=8/);
  await page.waitForSelector('#verified-body [data-max-rel]');
  console.log(
    `# long work: ${steps.length} step texts (${steps.join(' | ')}), ${elapsed.length} elapsed-time updates, last ${elapsed.at(-1)}`,
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test('an edit rewrites no form control with the value it holds', async () => {
  // Chromium's form tracking answers any write to a control with a layout of the
  // whole page; the page writes a control only when its value changes.
  const { page, problems } = await openPage(site.browser, site.server);
  await page.evaluate(() => {
    window.__sameWrites = [];
    for (const proto of [
      HTMLInputElement.prototype,
      HTMLSelectElement.prototype,
      HTMLTextAreaElement.prototype,
    ])
      for (const key of ['value', 'checked']) {
        const d = Object.getOwnPropertyDescriptor(proto, key);
        if (!d?.set) continue;
        Object.defineProperty(proto, key, {
          ...d,
          set(v) {
            if (this.isConnected && d.get.call(this) === (key === 'value' ? String(v) : Boolean(v)))
              window.__sameWrites.push(`${this.id || this.tagName}.${key}`);
            d.set.call(this, v);
          },
        });
      }
  });
  // A token edit, a mask change, a chip edit: each redraws the controls.
  await change(page, () =>
    page.fill('#text', 'The animal did not cross the road because it was too tired.'),
  );
  await change(page, () => page.selectOption('#mask', 'causal'));
  await change(page, async () => {
    await page.click('#chips button.chip >> nth=1');
    await page.keyboard.press('Control+A');
    await page.keyboard.type('cat');
    await page.keyboard.press('Enter');
  });
  assert.match(await page.textContent('#status-text'), /^Computed by the engine/);
  assert.deepEqual(await page.evaluate(() => window.__sameWrites), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a quick edit goes straight to its result: no progress flashes by', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  const seen = await page.evaluate(async () => {
    const texts = [];
    const watch = (id) =>
      new MutationObserver(() => texts.push(document.getElementById(id).textContent)).observe(
        document.getElementById(id),
        { childList: true, characterData: true, subtree: true },
      );
    watch('status-text');
    watch('step-text');
    let busy = false;
    new MutationObserver(
      () => (busy ||= document.getElementById('status').dataset.busy === '1'),
    ).observe(document.getElementById('status'), { attributes: true });
    const painted = () => performance.getEntriesByName('attnscope:painted', 'measure');
    const before = painted().length;
    const area = document.getElementById('text');
    area.value = area.value.replace('tired', 'sleepy');
    area.dispatchEvent(new Event('input', { bubbles: true }));
    while (painted().length <= before) await new Promise((r) => setTimeout(r, 5));
    return { texts, busy, ms: painted().at(-1).duration };
  });
  console.log(
    `# quick edit: result on screen ${seen.ms.toFixed(1)} ms after the run started; texts: ${seen.texts.join(' | ')}`,
  );
  // Only a run that outlasts 300 ms shows its progress; a busy machine may make this one do so.
  if (seen.ms < 300) {
    assert.equal(seen.busy, false);
    assert.ok(
      seen.texts.every((t) => !/^Computing|^Step /.test(t)),
      `progress shown: ${seen.texts.join(' | ')}`,
    );
  }
  assert.match(await page.textContent('#status-text'), /^Computed by the engine/);
  assert.deepEqual(problems, []);
  await page.close();
});
