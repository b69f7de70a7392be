// Helpers shared by security.test.mjs and robustness.test.mjs, on top of
// harness.mjs: open the built site, wait for a recomputation, build links with
// the site's own encoder, and probe that the page still works.
import assert from 'node:assert/strict';

import { loadAppModules } from '../fuzz/js/compile-app.mjs';
import { kToy, showSettings, waitReady, watch } from './harness.mjs';

let app;
/** The site's own parsing modules (web/app/src), compiled for Node. */
export async function appModules() {
  app ??= await loadAppModules();
  return app;
}

/** Opens the site with its settings unfolded; `ready: false` does not wait for a first result. */
export async function openPage(browser, server, hash = kToy, { ready = true } = {}) {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.addInitScript(() => {
    window.__cspViolations = [];
    document.addEventListener('securitypolicyviolation', (e) =>
      window.__cspViolations.push(`${e.violatedDirective} ${e.blockedURI}`),
    );
  });
  await page.goto(server.url + hash);
  if (ready) await waitReady(page);
  await showSettings(page);
  return { page, problems };
}

export const readyCount = (page) => page.evaluate(() => Number(document.body.dataset.ready ?? 0));

/** Runs `action` and waits for the computation it starts. */
export async function change(page, action) {
  const before = await readyCount(page);
  await action();
  return waitReady(page, before);
}

/** A `#s=` link holding `state` (sanitised first, as the page does). */
export async function linkFor(partial) {
  const { state, urlState } = await appModules();
  const s = state.sanitizeState({ ...state.defaultState('toy'), ...partial });
  return `#s=${await urlState.encodeState(s)}`;
}

/** The page still computes: a new text gives a new result for it. */
export async function assertStillWorks(page, text = 'still working after that') {
  await change(page, () => page.fill('#text', text));
  assert.match(await page.textContent('#token-count'), /^\d+ tokens/);
  assert.match(await page.textContent('#status-text'), /Computed by the engine/);
  assert.equal(await page.isHidden('#error'), true, 'an error is still shown');
}
