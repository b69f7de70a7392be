// "Train it yourself" in the built site: the copy/induction task trains in the page's
// worker until the held-out loss on its answers falls below 0.1 (the time it took is
// printed); the trained model becomes the page's model (the Model view shows its
// layers × heads, the heatmap its weights, equal to the package's forward pass of the
// exported file in Node); the exported .safetensors loads back through the file chooser
// with the same weights and the task's vocabulary; a head of layer 2 is an induction head
// by content: the panel's check and the exported model's attention in Node both see its
// weight leave the keys once the earlier copies change. Pause, resume, step, reset and a new
// learning rate; keyboard use, reduced motion and axe-core at laptop and phone sizes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { kToy, openDataTable, useSite, waitReady } from './harness.mjs';
import { axeViolations, downloadOf, kLaptop, kPhone, openAt } from './learners-helpers.mjs';

const site = useSite();
const kShots = '/tmp/train-shots';
// The target is 30 s on one core; the copy task's induction head took 38–50 s from
// the click on this shared 2-core machine under load (docs/ARCHITECTURE.md), so the bound
// leaves room for a busier machine, and the test prints what it measured.
const kMaxSeconds = Number(process.env.ATTN_TRAIN_MAX_SECONDS ?? 150);
let engine;
let dir;

before(async () => {
  mkdirSync(kShots, { recursive: true });
  dir = mkdtempSync(join(tmpdir(), 'attnscope-train-'));
  engine = await createAttnScope();
});

const stats = (page) =>
  page.$eval('#train-stats', (el) => ({
    state: el.dataset.state,
    step: Number(el.dataset.step),
    answerLoss: Number(el.dataset.answerLoss),
    seconds: Number(el.dataset.seconds),
  }));

const waitState = (page, state, timeout = 30_000) =>
  page.waitForFunction((s) => document.getElementById('train-stats')?.dataset.state === s, state, {
    timeout,
  });

const waitStep = (page, atLeast) =>
  page.waitForFunction(
    (n) => Number(document.getElementById('train-stats')?.dataset.step) >= n,
    atLeast,
  );

/** The metadata and the float32 tensors of a .safetensors file. */
function readSafetensors(bytes) {
  const n = Number(Buffer.from(bytes).readBigUInt64LE(0));
  const header = JSON.parse(Buffer.from(bytes.subarray(8, 8 + n)).toString('utf8'));
  return { header, data: bytes.subarray(8 + n) };
}

async function weightsTable(page, layer, head) {
  const before = Number(await page.evaluate(() => document.body.dataset.ready));
  if (Number(await page.inputValue('#sel-layer')) !== layer) {
    await page.selectOption('#sel-layer', String(layer));
    await waitReady(page, before);
  }
  await page.selectOption('#sel-head', String(head));
  await page.click('#tab-heatmap');
  await page.click('button[data-stage="weights"]');
  await openDataTable(page);
  return page.$$eval('#view details.data-table td', (tds) =>
    tds.map((td) => Number(td.title.replace('−', '-'))),
  );
}

function assertWeights(shown, expected, what) {
  assert.equal(shown.length, expected.length, what);
  shown.forEach((v, k) =>
    assert.ok(Math.abs(v - expected[k]) < 2e-6, `${what} ${k}: ${v} vs ${expected[k]}`),
  );
}

test('copy/induction trains below 0.1, becomes the page’s model, exports and loads back', async () => {
  const { page, problems } = await openAt(site, kToy, kLaptop);
  await page.$eval('#train', (el) => el.scrollIntoView({ block: 'start' }));
  assert.equal(await page.inputValue('#train-task'), 'copy');
  const started = Date.now();
  await page.click('#train-start');
  await waitStep(page, 1);
  // The page stays responsive while the worker trains: the longest gap between the main
  // thread's 20 ms timers over two seconds (this machine is shared, hence the margin).
  const gap = await page.evaluate(
    () =>
      new Promise((resolve) => {
        let last = performance.now();
        let longest = 0;
        const end = last + 2000;
        const tick = () => {
          const now = performance.now();
          longest = Math.max(longest, now - last);
          last = now;
          if (now < end) setTimeout(tick, 20);
          else resolve(longest);
        };
        setTimeout(tick, 20);
      }),
  );
  console.log(
    `copy/induction: the longest main-thread timer gap while training: ${gap.toFixed(0)} ms`,
  );
  assert.ok(gap < 1000, `the page stalled for ${gap} ms`);
  await waitState(page, 'done', kMaxSeconds * 1000 * 2);
  const wall = (Date.now() - started) / 1000;
  const end = await stats(page);
  console.log(
    `copy/induction: loss on the answers ${end.answerLoss.toFixed(4)} at step ${end.step}; ${end.seconds.toFixed(1)} s of training steps, ${wall.toFixed(1)} s from the click to the stop`,
  );
  assert.ok(end.answerLoss < 0.1, `loss on the answers ${end.answerLoss}`);
  assert.ok(wall < kMaxSeconds, `took ${wall} s, more than ${kMaxSeconds} s`);
  await page.screenshot({ path: join(kShots, 'train-done-1366.png') });

  // The trained model is now the page's: the probe's letters, one token each.
  await page.waitForSelector('#train-handoff');
  assert.match(await page.textContent('#train-handoff'), /now the page’s model/);
  await page.waitForFunction(() => document.body.dataset.model === 'gpt2');
  await waitReady(page);
  // The model menu says a file runs, not the toy.
  assert.equal(await page.inputValue('#model-source'), 'gpt2');
  const text = await page.inputValue('#text');
  assert.match(text, /^[A-P]{20}$/);
  // The model's run on the probe ends after the hand-over; its token strip shows then.
  await page.waitForFunction(() => document.querySelectorAll('.token-strip li').length > 0);
  const pieces = await page.$$eval('.token-strip li', (lis) => lis.map((li) => li.textContent));
  assert.deepEqual(pieces, text.split(''));
  await page.click('#tab-model');
  assert.equal(await page.locator('.model-grid button.thumb').count(), 2 * 2);

  // Export: the file carries the vocabulary, and its forward in Node gives the page's weights.
  const { name, bytes } = await downloadOf(page, () => page.click('#train-export'));
  assert.equal(name, 'attnscope-copy.safetensors');
  const { header } = readSafetensors(bytes);
  const vocabulary = JSON.parse(header.__metadata__.attnscope_vocabulary);
  assert.equal(vocabulary.kind, 'symbols');
  assert.equal(vocabulary.tokens.join(''), 'ABCDEFGHIJKLMNOP');
  const model = engine.loadModel(new Uint8Array(bytes));
  const tokens = text.split('').map((c) => vocabulary.tokens.indexOf(c));
  const attend = (ids) => model.forward({ tokens: ids, trace: true }).attentions;
  const f = { attentions: attend(tokens) };
  const T = tokens.length;
  const head = (layer, h) => f.attentions[layer].data.subarray(h * T * T, (h + 1) * T * T);
  assertWeights(await weightsTable(page, 1, 0), head(1, 0), 'trained, layer 2 head 1');

  // The probe ends with a run of n letters twice, the other letters all different.
  const n = [...Array(T / 2 + 1).keys()]
    .slice(1)
    .findLast((k) => text.slice(T - 2 * k, T - k) === text.slice(T - k));
  assert.ok(n >= 4 && new Set(text.slice(0, T - n)).size === T - n, `the probe ${text}`);
  // The induction head, by content, in the exported model: from each letter of the repeat
  // (but the first), the weight on the letter after that letter's first copy, then the same
  // with that first copy changed into a letter the probe lacks (the keys stay in place).
  const stranger = vocabulary.tokens.findIndex((c) => !text.includes(c));
  const induction = (layer, h) => {
    let kept = 0,
      changed = 0;
    for (let q = T - n + 1; q < T; q++) {
      const key = q - n + 1;
      kept += head(layer, h)[q * T + key];
      const other = tokens.slice();
      other[key - 1] = stranger;
      changed += attend(other)[layer].data[(h * T + q) * T + key];
    }
    return { kept: kept / (n - 1), changed: changed / (n - 1) };
  };
  assert.ok(stranger >= 0);
  const layer2 = [0, 1].map((h) => ({ h, ...induction(1, h) }));
  const layer1 = [0, 1].map((h) => induction(0, h).kept);
  model.dispose();
  const best = layer2.reduce((a, b) => (b.kept > a.kept ? b : a));
  console.log(
    `copy/induction: on the probe (a run of ${n}), layer 2, head ${best.h + 1} puts ${(100 * best.kept).toFixed(0)} % of its weight on the letter after the earlier copy, ${(100 * best.changed).toFixed(0)} % once that copy is changed; layer 1's heads there: ${layer1.map((x) => (100 * x).toFixed(0)).join(' % and ')} %`,
  );
  assert.ok(best.kept >= 0.5, `layer 2's induction weight ${JSON.stringify(layer2)}`);
  assert.ok(best.changed < best.kept / 2, `the copies changed: ${JSON.stringify(best)}`);
  // The panel says the same on its held-out batch: its strongest induction head is in
  // layer 2, and with the earlier copies changed it loses those keys.
  const named = page.locator('#train-named .named-head[data-pattern="induction"]').first();
  assert.equal(await named.getAttribute('data-layer'), '1');
  const share = Number(await named.getAttribute('data-share'));
  const check = page.locator('#train-content-check');
  assert.match(
    await check.textContent(),
    /^With every earlier copy .* layer 2, head \d puts .*by the letter before them, not by where they sit/,
  );
  const changed = Number(await check.getAttribute('data-changed'));
  assert.ok(changed < share / 2, `the panel's head: ${share} of its weight, ${changed} changed`);
  console.log(
    `copy/induction: the panel's induction head: ${await named.textContent()}; ${await check.textContent()}`,
  );

  // Loading the exported file through the file chooser: the same weights, the same tokens.
  const file = join(dir, name);
  writeFileSync(file, bytes);
  const before = Number(await page.evaluate(() => document.body.dataset.ready));
  await page.click('#model-about > summary'); // the loaded model's one line unfolds
  await page.click('#gpt2-box details.another-file summary');
  await page.setInputFiles('#gpt2-file', file);
  await page.waitForFunction(
    (n) => document.getElementById('gpt2-loaded')?.textContent?.startsWith(n),
    name,
  );
  await waitReady(page, before);
  assert.deepEqual(
    await page.$$eval('.token-strip li', (lis) => lis.map((li) => li.textContent)),
    text.split(''),
  );
  assertWeights(await weightsTable(page, 1, 0), head(1, 0), 'reloaded, layer 2 head 1');
  assertWeights(await weightsTable(page, 0, 1), head(0, 1), 'reloaded, layer 1 head 2');
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('pause, resume, step, a new learning rate and reset', async () => {
  const { page, problems } = await openAt(site, kToy, kLaptop);
  await page.selectOption('#train-task', 'previous');
  // Before a model exists, Resume and Step do nothing, and look it.
  const opacity = (id) => page.$eval(id, (b) => Number(getComputedStyle(b).opacity));
  assert.equal(await page.isDisabled('#train-step'), true);
  assert.ok((await opacity('#train-step')) < 0.6);
  assert.ok((await opacity('#train-pause')) < 0.6);
  assert.equal(await opacity('#train-start'), 1);
  await page.click('#train-start');
  await waitStep(page, 5);
  await page.click('#train-pause');
  await waitState(page, 'paused');
  const paused = await stats(page);
  await page.waitForTimeout(600);
  assert.equal((await stats(page)).step, paused.step, 'paused: no step is taken');
  assert.equal(await page.textContent('#train-pause'), 'Resume');
  await page.click('#train-step');
  await waitStep(page, paused.step + 1);
  await page.waitForTimeout(300);
  assert.equal((await stats(page)).step, paused.step + 1, 'one step');
  // The scrubber shows an earlier snapshot's step.
  await page.$eval('#train-scrub', (el) => {
    el.value = '0';
    el.dispatchEvent(new Event('input', { bubbles: true }));
  });
  assert.match(await page.textContent('.train-scrub'), /Snapshot at step 0 \(1 of/);
  // A new learning rate while paused, then resume: training goes on from where it was.
  await page.fill('#train-lr', '0.001');
  await page.press('#train-lr', 'Enter');
  await page.click('#train-pause');
  await waitState(page, 'running');
  await waitStep(page, paused.step + 20);
  await page.click('#train-pause');
  await waitState(page, 'paused');
  await page.click('#train-reset');
  await page.waitForFunction(
    () =>
      document.getElementById('train-stats')?.dataset.step === '0' &&
      document.getElementById('train-stats')?.dataset.state === 'paused',
  );
  assert.deepEqual(problems, []);
  await page.close();
});

test('keyboard, reduced motion and axe-core at laptop and phone sizes', async () => {
  for (const [viewport, label] of [
    [kLaptop, '1366'],
    [kPhone, '390'],
  ]) {
    const { page, problems } = await openAt(site, kToy, viewport, { reducedMotion: true });
    await page.$eval('#train', (el) => el.scrollIntoView({ block: 'start' }));
    assert.deepEqual(await axeViolations(page), [], `before training, ${label}`);
    await page.selectOption('#train-task', 'text');
    const text = await page.inputValue('#train-text');
    assert.match(text, /^In the beginning/);
    // A text too short to train on: said, and Train waits for a longer one.
    await page.fill('#train-text', 'Too short to learn from.');
    assert.match(
      await page.textContent('#train [role="alert"]'),
      /^Your text has 6 words and marks: type or paste at least 9/,
    );
    assert.equal(await page.isDisabled('#train-start'), true);
    await page.fill('#train-text', text);
    await page.focus('#train-start');
    await page.keyboard.press('Enter');
    await waitStep(page, 3);
    await page.focus('#train-pause');
    await page.keyboard.press('Space');
    await waitState(page, 'paused');
    // Reduced motion: nothing moves by itself; the numbers are still the live ones.
    const transitions = await page.$$eval(
      '#train *',
      (els) =>
        els.filter((el) => {
          const s = getComputedStyle(el);
          return (
            s.transitionDuration.split(',').some((d) => parseFloat(d) > 0) ||
            s.animationName !== 'none'
          );
        }).length,
    );
    assert.equal(transitions, 0);
    await page.focus('.train-head[aria-label^="Layer 2, head 3"]');
    await page.keyboard.press('Enter');
    assert.equal(
      await page.getAttribute('.train-head[aria-label^="Layer 2, head 3"]', 'aria-pressed'),
      'true',
    );
    assert.match(await page.textContent('#train-gradient-caption'), /layer 2, head 3/);
    assert.deepEqual(await axeViolations(page), [], `paused, ${label}`);
    await page.$eval('#train', (el) => el.scrollIntoView({ block: 'start' }));
    await page.screenshot({ path: join(kShots, `train-${label}.png`) });
    assert.deepEqual(problems, []);
    await page.close();
  }
});
