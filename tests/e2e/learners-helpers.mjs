// Helpers of the learner-facing e2e files (learners*.test.mjs): open the site at a
// screen size, wait for a recomputation, catch a download, run axe-core.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';

import { kToy, repo, waitReady, watch } from './harness.mjs';

export const kLaptop = { width: 1366, height: 768 };
export const kPhone = { width: 390, height: 844 };

/** Opens the built site of `site` (harness.mjs useSite) at `viewport`. */
export async function openAt(site, hash = kToy, viewport = kLaptop, options = {}) {
  const page = await site.browser.context.newPage();
  await page.setViewportSize(viewport);
  if (options.reducedMotion) await page.emulateMedia({ reducedMotion: 'reduce' });
  if (options.init) await page.addInitScript(options.init);
  const problems = watch(page);
  await page.goto(site.server.url + hash);
  await waitReady(page);
  return { page, problems };
}

/** Runs `action` and waits for the computation it starts. */
export async function change(page, action) {
  const before = Number(await page.evaluate(() => document.body.dataset.ready));
  await action();
  return waitReady(page, before);
}

export async function downloadOf(page, click) {
  const [dl] = await Promise.all([page.waitForEvent('download'), click()]);
  return { name: dl.suggestedFilename(), bytes: await readFile(await dl.path()) };
}

/**
 * Pixels of a label in the last 2 CSS px of a heatmap canvas's band above its cells
 * (where the column labels are written): more than none means a label is cut at the
 * picture's right edge. The band's background is taken from its bottom-left corner.
 */
export async function labelInkAtRightEdge(page, selector = '#view canvas.heatmap') {
  return page.$eval(selector, (canvas) => {
    const dpr = canvas.width / canvas.getBoundingClientRect().width;
    const top = Number(canvas.dataset.cells.split(' ')[1]); // where the cells start
    const band = Math.floor((top - 4) * dpr);
    const edge = Math.ceil(2 * dpr);
    const ctx = canvas.getContext('2d');
    const ground = ctx.getImageData(1, band - 1, 1, 1).data;
    const px = ctx.getImageData(canvas.width - edge, 0, edge, band).data;
    let ink = 0;
    for (let o = 0; o < px.length; o += 4)
      if (px.slice(o, o + 3).some((c, k) => Math.abs(c - ground[k]) > 24)) ink++;
    return ink;
  });
}

/** axe-core's violations on the whole page, one line each. */
export async function axeViolations(page) {
  const source = await readFile(join(repo, 'node_modules/axe-core/axe.min.js'), 'utf8');
  await page.evaluate(source); // evaluated through DevTools, not subject to the page's CSP
  return page.evaluate(async () => {
    // Contrast is judged on the page at rest. The walkthrough's newest step fades in over
    // 0.35 s each time the player moves on, so on a slow machine axe could catch one at part
    // opacity; animations and transitions are held off while it runs (as Playwright's
    // screenshots do with animations: 'disabled'), through a constructed style sheet, which
    // the page's style-src CSP leaves alone.
    const still = new CSSStyleSheet();
    still.replaceSync(
      '*, *::before, *::after { animation: none !important; transition: none !important; }',
    );
    document.adoptedStyleSheets = [...document.adoptedStyleSheets, still];
    let r;
    try {
      r = await window.axe.run(document, { resultTypes: ['violations'] });
    } finally {
      document.adoptedStyleSheets = document.adoptedStyleSheets.filter((x) => x !== still);
    }
    return r.violations.map(
      (v) =>
        `${v.id}: ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join(' | ')}`,
    );
  });
}
