// "Train it yourself" in the built site: the copy/induction task trains in the page's
// worker until the held-out loss on its answers falls below 0.1 (the time it took is
// printed); the trained model becomes the page's model (the Model view shows its
// layers × heads, the heatmap its weights, equal to the package's forward pass of the
// exported file in Node); the exported .safetensors loads back through the file chooser
// with the same weights and the task's vocabulary; the panel's content check says the copy
// head looks a fixed distance back. Pause, resume, step, reset and a new
// learning rate; keyboard use, reduced motion and axe-core at laptop and phone sizes.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, test } from 'node:test';

import { createAttnScope } from 'attnscope';
import { kToy, useSite, waitReady } from './harness.mjs';
import { axeViolations, downloadOf, kLaptop, kPhone, openAt } from './learners-helpers.mjs';

const site = useSite();
const kShots = '/tmp/train-shots';
// The target is 30 s on one core; this shared 2-core machine runs other builds
// beside the test, so it allows more and prints what it measured.
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
  if (!(await page.$('#view details.data-table[open]')))
    await page.click('#view details.data-table summary');
  await page.waitForSelector('#view details.data-table[open] table');
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
  const f = model.forward({ tokens, trace: true });
  model.dispose();
  const T = tokens.length;
  const head = (layer, h) => f.attentions[layer].data.subarray(h * T * T, (h + 1) * T * T);
  assertWeights(await weightsTable(page, 1, 0), head(1, 0), 'trained, layer 2 head 1');

  // The copy stripe: from each letter of the repeat, some head puts its largest weight on
  // the letter after that letter's first copy (n − 1 places back, n the run's length).
  const n = T / 2;
  assert.equal(text.slice(0, n), text.slice(n));
  let best = { share: 0, at: '' };
  for (let layer = 0; layer < 2; layer++) {
    for (let h = 0; h < 2; h++) {
      const w = head(layer, h);
      let hits = 0;
      for (let i = n; i < T; i++) {
        const row = Array.from(w.subarray(i * T, (i + 1) * T));
        if (row.indexOf(Math.max(...row)) === i - n + 1) hits++;
      }
      if (hits / n > best.share)
        best = { share: hits / n, at: `layer ${layer + 1}, head ${h + 1}` };
    }
  }
  console.log(
    `copy/induction: ${best.at} puts its largest weight on the next letter's first copy for ${(100 * best.share).toFixed(0)} % of the repeat`,
  );
  assert.ok(best.share >= 0.7, `the copy stripe: ${JSON.stringify(best)}`);
  // The panel's content check says how that head finds the letter: with the earlier copies
  // changed it keeps its weight where it was, so it looks a fixed distance back.
  assert.match(await page.textContent('#train-content-check'), /mostly by where they sit/);
  assert.ok((await page.locator('.train-head[data-pattern="induction"]').count()) > 0);
  assert.match(await page.textContent('#train-maps'), /fixed distance/);

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
