// Two things a learner does with a figure: pinch a long input's heatmap with two
// fingers (real touch events through Chromium's DevTools protocol), and export a
// figure in the middle of its animation (the file holds the engine's values).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { kToy, useSite } from './harness.mjs';
import { change, downloadOf, kPhone, openAt } from './learners-helpers.mjs';

const site = useSite();

const size = async (page) =>
  Number((await page.textContent('#view figure.matrix figcaption')).match(/\((\d+) × \d+\)/)[1]);

/** Two fingers on the heatmap, `from` px apart, moving to `to` px apart in steps. */
async function pinch(page, cdp, from, to) {
  const box = await page.locator('#view figure.matrix canvas').boundingBox();
  const [x, y] = [box.x + box.width / 2, box.y + box.height / 2];
  const fingers = (d) => [
    { x: x - d / 2, y, id: 0 },
    { x: x + d / 2, y, id: 1 },
  ];
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchStart', touchPoints: fingers(from) });
  const steps = 8;
  for (let k = 1; k <= steps; k++)
    await cdp.send('Input.dispatchTouchEvent', {
      type: 'touchMove',
      touchPoints: fingers(from + ((to - from) * k) / steps),
    });
  await cdp.send('Input.dispatchTouchEvent', { type: 'touchEnd', touchPoints: [] });
}

test('pinch: two fingers zoom a long heatmap in and out, not the page; the zoomed figure exports all of it', async () => {
  const { page, problems } = await openAt(site, kToy, kPhone);
  const words = Array.from(
    { length: 40 },
    (_, i) => ['the', 'cat', 'sat', 'on', 'a', 'warm', 'mat', 'today'][i % 8],
  ).join(' ');
  await change(page, () => page.fill('#text', words));
  assert.equal(await size(page), 40);
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('Emulation.setTouchEmulationEnabled', { enabled: true, maxTouchPoints: 5 });
  await page.locator('#view figure.matrix canvas').scrollIntoViewIfNeeded();
  const scroll = await page.evaluate(() => window.scrollY);
  // Fingers spreading from 40 to 160 px: the cells grow, fewer tokens are shown.
  await pinch(page, cdp, 40, 160);
  const zoomedIn = await size(page);
  assert.ok(zoomedIn < 40 && zoomedIn >= 4, `${zoomedIn} tokens after spreading two fingers`);
  assert.equal(await page.inputValue('#zoom'), String(zoomedIn));
  // The page itself was neither zoomed nor scrolled, and no cell was tapped.
  assert.equal(await page.evaluate(() => window.visualViewport.scale), 1);
  assert.ok(Math.abs((await page.evaluate(() => window.scrollY)) - scroll) < 2);
  assert.equal(await page.locator('#inspect-popover').count(), 0);
  // Zoomed in, the figure's CSV still holds the whole matrix.
  const csv = await downloadOf(page, () =>
    page.click('#view figure.matrix .export-bar button:has-text("CSV")'),
  );
  assert.equal(csv.bytes.toString().trim().split('\n').length, 1 + 40);
  // Fingers closing: back out.
  await pinch(page, cdp, 160, 40);
  const zoomedOut = await size(page);
  assert.ok(zoomedOut > zoomedIn, `${zoomedOut} tokens after closing them (from ${zoomedIn})`);
  // Chromium's own pinch gesture, through its compositor as a touch screen sends it:
  // the figure zooms, the page does not.
  const box = await page.locator('#view figure.matrix canvas').boundingBox();
  await cdp.send('Input.synthesizePinchGesture', {
    x: box.x + box.width / 2,
    y: box.y + box.height / 2,
    scaleFactor: 2.5,
    gestureSourceType: 'touch',
  });
  await page.waitForFunction(
    (n) =>
      Number(document.querySelector('#zoom')?.value) > 0 &&
      Number(document.querySelector('#zoom').value) < n,
    zoomedOut,
  );
  assert.equal(await page.evaluate(() => window.visualViewport.scale), 1);
  // One finger alone still scrolls the page as usual (the figure allows panning).
  assert.equal(
    await page.$eval('#view .figures', (f) => getComputedStyle(f).touchAction),
    'pan-x pan-y',
  );
  assert.deepEqual(problems, []);
  await page.close();
});

/** Clicks `button` while the stage's build-up plays; says how far it was at the click. */
async function exportWhilePlaying(page, label) {
  const [file, t] = await Promise.all([
    downloadOf(page, () => Promise.resolve()),
    page.evaluate((label) => {
      document.getElementById('replay-stage').click();
      return new Promise((done) => {
        const wait = () => {
          const t = Number(document.getElementById('stage-time').value);
          if (t < 20 || t >= 70) return requestAnimationFrame(wait);
          document.querySelector(`#view .export-bar button[aria-label^="${label}"]`).click();
          done(t);
        };
        requestAnimationFrame(wait);
      });
    }, label),
  ]);
  return { svg: file.bytes.toString(), t };
}

const numbers = (text) =>
  text
    .trim()
    .split('\n')
    .slice(1)
    .map((l) => Number(l.split(',').at(-1)));

test('exports made mid-animation hold the engine’s final values (Vectors, Head view)', async () => {
  const { page, problems } = await openAt(site);
  // Vectors in the Q, K, V stage: q, k, v grow component by component.
  await page.click('#tab-bars');
  await page.click('button[data-stage="qkv"]');
  const csv = (
    await downloadOf(page, () => page.click('#view .export-bar button:has-text("CSV")'))
  ).bytes.toString();
  const engine = numbers(csv); // x, q, k, v of the focused token, as the engine gave them
  const onScreen = () =>
    page.$$eval('#view svg.bars-view rect[data-value]', (rs) =>
      rs.map((r) => Number(r.dataset.value)),
    );
  for (const at of ['0', '30']) {
    await page.locator('#stage-time').fill(at);
    const shown = await onScreen();
    assert.notDeepEqual(shown, engine, `the bars are partial at ${at} %`);
    const svg = (
      await downloadOf(page, () => page.click('#view .export-bar button:has-text("SVG")'))
    ).bytes.toString();
    const exported = [...svg.matchAll(/data-value="([^"]+)"/g)].map((m) => Number(m[1]));
    assert.deepEqual(exported, engine, `SVG exported at ${at} % of the stage`);
  }
  // The same while it plays (clicked between 20 % and 70 % of the build-up).
  const playing = await exportWhilePlaying(page, 'SVG');
  const exported = [...playing.svg.matchAll(/data-value="([^"]+)"/g)].map((m) => Number(m[1]));
  assert.deepEqual(exported, engine, `SVG exported at ${playing.t} % while playing`);

  // Head view in softmax: the focused query's lines go from exp(s − max) to the weights.
  await page.click('#tab-lines');
  await page.click('button[data-stage="weights"]');
  await page.locator('#stage-time').fill('0');
  const weightsCsv = (
    await downloadOf(page, () => page.click('#view .export-bar button:has-text("CSV")'))
  ).bytes
    .toString()
    .trim()
    .split('\n');
  const query =
    Number(
      await page.evaluate(
        () =>
          document.querySelector('.query-label[font-weight="700"]').textContent.match(/(\d+)$/)[1],
      ),
    ) - 1;
  const row = weightsCsv[query + 1].split(',').slice(1).map(Number);
  const lineWeights = (svg) =>
    [...svg.matchAll(/<line[^>]*stroke="#b34700"[^>]*>\s*<title>[^<]*: ([^<]+)<\/title>/g)].map(
      (m) => Number(m[1]),
    );
  const svg = (
    await downloadOf(page, () => page.click('#view .export-bar button:has-text("SVG")'))
  ).bytes.toString();
  const shown = await page.$$eval('#view svg.lines-view line[stroke="#b34700"] title', (ts) =>
    ts.map((t) => Number(t.textContent.split(': ').at(-1))),
  );
  const expected = row.filter((v) => v > 0.005);
  assert.notDeepEqual(shown, expected, 'on screen, the row is not yet normalised');
  const got = lineWeights(svg);
  assert.equal(got.length, expected.length);
  got.forEach((v, k) =>
    assert.ok(
      Math.abs(v - expected[k]) <= 1e-8 * Math.max(1, expected[k]),
      `line ${k}: ${v} vs ${expected[k]}`,
    ),
  );
  assert.deepEqual(problems, []);
  await page.close();
});
