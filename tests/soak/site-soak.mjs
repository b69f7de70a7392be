// Site soak: the built page left animating (pipeline and walkthrough players
// at 5×, restarted whenever they stop, the view tabs cycling, and a new seed
// every 15 s so the worker recomputes) must not grow in memory. Measured over
// Chromium's DevTools protocol: HeapProfiler.collectGarbage, then
// Performance.getMetrics (JSHeapUsedSize, Nodes, JSEventListeners).
//   node tests/soak/site-soak.mjs [--seconds=600]   (or SOAK_SECONDS)
// Needs web/app/dist (npm run build && npm run build:site). Exits 1 on growth.
import assert from 'node:assert/strict';

import { kToy, launch, showSettings, startServer, waitReady, watch } from '../e2e/harness.mjs';

const seconds = Number(
  process.argv.find((a) => a.startsWith('--seconds='))?.split('=')[1] ??
    process.env.SOAK_SECONDS ??
    600,
);
const sampleEvery = Math.max(5, Math.min(30, seconds / 12)) * 1000;
const warmup = Math.min(60, seconds / 6) * 1000;

const server = await startServer();
const browser = await launch();
let failed = false;
try {
  const page = await browser.context.newPage();
  const problems = watch(page);
  await page.goto(server.url + kToy); // its seed changes are the toy's
  await waitReady(page);
  const cdp = await browser.context.newCDPSession(page);
  await cdp.send('Performance.enable');

  // Measured in one canonical view (players paused at their first frame,
  // heatmap tab) so samples compare like with like.
  async function sample() {
    for (const play of await page.$$('button[data-act="play"]')) {
      if ((await play.textContent()) !== '▶') await play.click();
    }
    for (const first of await page.$$('button[data-act="first"]')) await first.click();
    await page.click('#tab-heatmap');
    await page.waitForTimeout(500);
    await cdp.send('HeapProfiler.collectGarbage');
    const { metrics } = await cdp.send('Performance.getMetrics');
    const m = Object.fromEntries(metrics.map((x) => [x.name, x.value]));
    return {
      t: (Date.now() - t0) / 1000,
      heap: m.JSHeapUsedSize,
      nodes: m.Nodes,
      listeners: m.JSEventListeners,
      documents: m.Documents,
      ready: await page.evaluate(() => Number(document.body.dataset.ready)),
    };
  }

  // The seed lives under More settings: unfolded once, before any sample.
  await showSettings(page);
  // The players' speed selects: fastest.
  for (const sel of await page.$$('select[aria-label$="speed"]')) await sel.selectOption('250');
  const tabs = ['heatmap', 'lines', 'heads', 'bars'];
  let seed = 1;
  const t0 = Date.now();
  const samples = [];
  let nextSample = t0 + warmup;
  let nextSeed = t0 + 15_000;
  let tab = 0;
  while (Date.now() - t0 < seconds * 1000) {
    // Restart any player that reached its end.
    for (const play of await page.$$('button[data-act="play"]')) {
      if ((await play.textContent()) === '▶') await play.click();
    }
    if (Date.now() >= nextSeed) {
      nextSeed += 15_000;
      await page.fill('#seed', String(++seed));
      await page.press('#seed', 'Tab');
      await page.click(`#tab-${tabs[tab++ % tabs.length]}`);
    }
    if (Date.now() >= nextSample) {
      nextSample += sampleEvery;
      const s = await sample();
      samples.push(s);
      console.log(
        `# t=${s.t.toFixed(0)} s  JS heap ${(s.heap / 2 ** 20).toFixed(2)} MiB  nodes ${s.nodes}  listeners ${s.listeners}  documents ${s.documents}  results ${s.ready}`,
      );
    }
    await page.waitForTimeout(1000);
  }
  samples.push(await sample());

  const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const k = Math.max(1, Math.min(3, Math.floor(samples.length / 3)));
  const first = samples.slice(0, k),
    last = samples.slice(-k);
  const heapGrowth = mean(last.map((s) => s.heap)) - mean(first.map((s) => s.heap));
  const nodeGrowth = mean(last.map((s) => s.nodes)) - mean(first.map((s) => s.nodes));
  const results = samples.at(-1).ready - samples[0].ready;
  console.log(
    `# site soak: ${seconds} s, ${samples.length} samples, ${results} recomputations; JS heap ${(mean(first.map((s) => s.heap)) / 2 ** 20).toFixed(2)} → ${(mean(last.map((s) => s.heap)) / 2 ** 20).toFixed(2)} MiB (${(heapGrowth / 2 ** 20).toFixed(2)} MiB), DOM nodes ${Math.round(mean(first.map((s) => s.nodes)))} → ${Math.round(mean(last.map((s) => s.nodes)))}`,
  );
  assert.ok(results > 0, 'the page never recomputed during the soak');
  assert.ok(
    heapGrowth < Math.max(2 * 2 ** 20, 0.1 * first[0].heap),
    `JS heap grew by ${(heapGrowth / 2 ** 20).toFixed(2)} MiB`,
  );
  assert.ok(nodeGrowth < Math.max(500, 0.1 * first[0].nodes), `DOM grew by ${nodeGrowth} nodes`);
  assert.deepEqual(problems, []);
  console.log('# site soak: no growth');
} catch (e) {
  failed = true;
  console.error(e);
} finally {
  await browser.close();
  server.stop();
}
process.exit(failed ? 1 : 0);
