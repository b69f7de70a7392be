// Times the demo site's first screen in headless Chromium: from navigation to the
// first animation frame with the pipeline's view drawn (a canvas in #view), with a
// cold cache (a new browser profile per load). One line per address and run, then
// the median of each.
//
//   node web/bench/site-startup.mjs [--runs=5] [hash ...]    (default hashes: '' and '#model=toy')
//
// Needs the built site (npm run build && npm run build:site → web/app/dist/).
import { launch, startServer } from '../../tests/e2e/harness.mjs';

const args = process.argv.slice(2);
const runs = Number(args.find((a) => a.startsWith('--runs='))?.split('=')[1] ?? 5);
const given = args.filter((a) => !a.startsWith('--'));
const hashes = given.length ? given : ['', '#model=toy'];

// Runs in the page before its scripts: notes the first frame whose #view holds a drawn canvas.
function watchFirstDraw() {
  const look = () => {
    const canvas = document.querySelector('#view canvas');
    if (canvas && canvas.width > 0) window.__firstDraw = performance.now();
    else requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
}

const server = await startServer();
const medians = [];
try {
  for (const hash of hashes) {
    const times = [];
    for (let r = 0; r < runs; r++) {
      const browser = await launch();
      try {
        const page = await browser.context.newPage();
        await page.setViewportSize({ width: 1366, height: 768 });
        await page.addInitScript(watchFirstDraw);
        await page.goto(server.url + hash);
        await page.waitForFunction(() => window.__firstDraw !== undefined, null, {
          timeout: 60_000,
        });
        const ms = await page.evaluate(() => window.__firstDraw);
        const model = await page.evaluate(() => document.body.dataset.model);
        times.push(ms);
        console.log(`${hash || '(no hash)'} run ${r + 1}: ${ms.toFixed(0)} ms (${model})`);
      } finally {
        await browser.close();
      }
    }
    times.sort((a, b) => a - b);
    medians.push(`${hash || '(no hash)'}: median ${times[times.length >> 1].toFixed(0)} ms`);
  }
} finally {
  server.stop();
}
console.log(medians.join('\n'));
