// The input as a compact bar above the figures: every setting kept and reachable by
// keyboard (the rarer ones folded), a tutorial's comparison right under the menu
// that chose it, and the whole page used with the keyboard only and reduced motion.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { test } from 'node:test';
import { deflateRawSync } from 'node:zlib';

import { kToy, screenshots, useSite } from './harness.mjs';
import { axeViolations, change, kLaptop, kPhone, openAt } from './learners-helpers.mjs';

const site = useSite();

const focused = (page) =>
  page.evaluate(() => {
    const a = document.activeElement;
    return a.id || a.dataset.stage || a.dataset.tab || a.className || a.tagName;
  });

test('the bar: key controls in it, the rest folded under More settings, all by keyboard', async () => {
  const { page, problems } = await openAt(site);
  assert.equal(await page.getAttribute('#more-settings', 'aria-expanded'), 'false');
  assert.equal(await page.isHidden('#settings'), true);
  // Tab order: example, text, heads, mask, More settings, the tokens (one stop).
  await page.focus('#preset');
  const order = [];
  for (let k = 0; k < 5; k++) {
    await page.keyboard.press('Tab');
    order.push(await focused(page));
  }
  assert.deepEqual(order, ['text', 'heads', 'mask', 'more-settings', 'chip']);
  // The mask by keyboard recomputes.
  await page.focus('#mask');
  await change(page, () => page.keyboard.press('ArrowDown'));
  assert.equal(await page.inputValue('#mask'), 'causal');
  // More settings unfolds with Enter; its fields come right after in the tab order.
  await page.focus('#more-settings');
  await page.keyboard.press('Enter');
  assert.equal(await page.getAttribute('#more-settings', 'aria-expanded'), 'true');
  assert.equal(await page.isVisible('#dModel'), true);
  await page.keyboard.press('Tab'); // the tokens
  await page.keyboard.press('Tab'); // the model, at the tokens' row end
  assert.equal(await focused(page), 'model-source');
  await page.keyboard.press('Tab');
  assert.equal(await focused(page), 'scaleMode');
  for (const id of [
    '#dModel',
    '#dK',
    '#dV',
    '#block',
    '#hidden',
    '#seed',
    '#reseed',
    '#import-weights',
  ])
    assert.equal(await page.isVisible(id), true, `${id} is in the settings`);
  await page.focus('#positional');
  await change(page, () => page.keyboard.press('Space'));
  assert.equal(await page.isChecked('#positional'), true);
  // Folded again with the same button.
  await page.focus('#more-settings');
  await page.keyboard.press('Enter');
  assert.equal(await page.isHidden('#settings'), true);
  assert.deepEqual(await axeViolations(page), []);
  assert.deepEqual(problems, []);
  await page.close();
});

test('a value clamped in a folded field unfolds the settings, so its note is seen', async () => {
  // A shared link asking for d_model 9999 (a field under More settings) and 17 heads (in the bar).
  const raw = { text: 'a link asks too much', dModel: 9999, heads: 17 };
  const hash = `#s=${deflateRawSync(Buffer.from(JSON.stringify(raw))).toString('base64url')}`;
  const { page, problems } = await openAt(site, hash);
  assert.equal(await page.inputValue('#dModel'), '512');
  assert.equal(await page.getAttribute('#more-settings', 'aria-expanded'), 'true');
  assert.equal(await page.isVisible('#dModel-note'), true);
  assert.match(await page.textContent('#dModel-note'), /using 512/);
  assert.match(await page.textContent('#heads-note'), /using 16/);
  // A page opened without such a note keeps them folded.
  const plain = await openAt(site);
  assert.equal(await plain.page.isHidden('#settings'), true);
  assert.deepEqual([...problems, ...plain.problems], []);
  await plain.page.close();
  await page.close();
});

test('a tutorial preset: its comparison right under the menu, on screen, folded at will', async () => {
  for (const viewport of [kLaptop, kPhone]) {
    const { page, problems } = await openAt(site, kToy, viewport);
    await change(page, () => page.selectOption('#preset', 'seed002'));
    const [menu, checks, pipeline] = await page.evaluate(() =>
      ['#preset', '#checks', '#pipeline'].map((s) =>
        document.querySelector(s).getBoundingClientRect(),
      ),
    );
    assert.ok(
      checks.top > menu.bottom && checks.bottom <= pipeline.top,
      'between the menu and the figures',
    );
    // Right under the bar (a phone has the example's note above it): on the first screen.
    assert.ok(
      checks.top - menu.bottom < (viewport === kPhone ? 420 : 80),
      `${checks.top - menu.bottom}px below the menu`,
    );
    assert.ok(checks.top < viewport.height, `the comparison starts at ${checks.top}`);
    const table = await page.locator('#checks table').boundingBox();
    assert.ok(
      table.x + table.width <= viewport.width,
      `the table ends at x = ${table.x + table.width}`,
    );
    assert.match(await page.textContent('#checks caption'), /Three inputs of size 4/);
    assert.match(await page.textContent('td[data-check="0"]'), /\[2\.0000, 4\.0000, 4\.0000\]/);
    // The tutorial's own weights are not called random.
    assert.match(await page.textContent('#weights-note'), /^Weights set by hand.*trained model/);
    await page.screenshot({ path: join(screenshots, `preset-checks-${viewport.width}.png`) });
    // Folded by its summary; another tutorial unfolds it again; "(your own)" hides it.
    await page.click('#preset-box > summary');
    assert.equal(await page.isVisible('#checks'), false);
    await change(page, () => page.selectOption('#preset', 'seed001'));
    assert.equal(await page.isVisible('#checks'), true);
    assert.match(await page.textContent('#checks caption'), /.+/);
    assert.deepEqual(await axeViolations(page), []);
    await change(page, () => page.fill('#text', 'my own words now'));
    assert.equal(await page.isHidden('#preset-box'), true);
    await change(page, () => page.click('#more-settings').then(() => page.click('#clear-edits')));
    assert.match(await page.textContent('#weights-note'), /^Random weights/);
    assert.deepEqual(problems, []);
    await page.close();
  }
});

test('keyboard only with reduced motion, laptop and phone: every control reached, focus visible, the page driven by keys', async () => {
  for (const viewport of [kLaptop, kPhone]) {
    const { page, problems } = await openAt(site, kToy, viewport, { reducedMotion: true });
    const stops = [];
    for (let k = 0; k < 45; k++) {
      await page.keyboard.press('Tab');
      stops.push(
        await page.evaluate(() => {
          const a = document.activeElement;
          const r = a.getBoundingClientRect();
          const style = getComputedStyle(a);
          return {
            name: a.id || a.dataset.stage || a.dataset.tab || a.className || a.tagName,
            seen: r.width > 0 && r.bottom > 0 && r.top < innerHeight,
            ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) > 0,
            body: a === document.body,
          };
        }),
      );
    }
    const names = stops.map((s) => s.name);
    for (const want of [
      'preset',
      'text',
      'heads',
      'mask',
      'more-settings',
      'chip',
      'x',
      'softmax',
      'stage-time',
      'tab-heatmap',
      'heatmap',
      'copy-link',
    ])
      assert.ok(
        names.some(
          (n) =>
            n === want || n.split(' ').includes(want) || (want === 'softmax' && n === 'weights'),
        ),
        `${want} reached by Tab (${viewport.width}px): ${names.join(', ')}`,
      );
    for (const s of stops.filter((s) => !s.body)) {
      assert.ok(s.seen, `${s.name} is scrolled into view when focused (${viewport.width}px)`);
      assert.ok(s.ring, `${s.name} shows a focus ring (${viewport.width}px)`);
    }
    // A stage by Enter: with reduced motion it is shown whole at once.
    await page.focus('button[data-stage="scores"]');
    await page.keyboard.press('Enter');
    assert.equal(await page.getAttribute('#stages [aria-current]', 'data-stage'), 'scores');
    assert.equal(await page.inputValue('#stage-time'), '100');
    await page.focus('button[data-stage="weights"]');
    await page.keyboard.press('Enter');
    // The selected cell moves with the arrow keys on the focused heatmap.
    await page.focus('#view figure.matrix canvas');
    await page.keyboard.press('ArrowUp');
    await page.waitForFunction(() =>
      /\[7, 2\]/.test(document.querySelector('#inspect-body h3')?.textContent ?? ''),
    );
    // The views by arrow keys on the tabs; the Head view's query by ↑ / ↓.
    await page.focus('#tab-heatmap');
    await page.keyboard.press('ArrowRight');
    await page.waitForFunction(() => document.activeElement?.id === 'tab-lines');
    assert.equal(await page.getAttribute('#tab-lines', 'aria-selected'), 'true');
    await page.focus('#view svg.lines-view');
    await page.keyboard.press('ArrowDown');
    await page.waitForFunction(() =>
      /^\S+ 8$/.test(document.querySelector('.query-label[font-weight="700"]')?.textContent ?? ''),
    );
    await page.screenshot({ path: join(screenshots, `keyboard-${viewport.width}.png`) });
    assert.deepEqual(await axeViolations(page), []);
    assert.deepEqual(problems, []);
    await page.close();
  }
});
