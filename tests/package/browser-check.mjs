// Opens the consumer app in headless Chromium and checks that seed 001 ran
// on the page, in the worker and in a pool of two workers. Usage: node browser-check.mjs <url>
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { chromium } from 'playwright-core';

const url = process.argv[2];
const profile = mkdtempSync(join(tmpdir(), 'attnscope-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM ?? '/usr/bin/chromium',
  headless: true,
  args: [
    '--no-sandbox',
    '--disable-gpu',
    '--no-first-run',
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
  ],
});
try {
  const page = context.pages()[0] ?? (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(e.message));
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  await page.goto(url);
  await page.waitForSelector('#result[data-done="1"]', { timeout: 30000 });
  const text = await page.textContent('#result');
  assert.ok(!text.startsWith('error'), text);
  const result = JSON.parse(text);
  const expected = [1.660477, 2.660477, 2.339523, 3.339523];
  for (const where of ['page', 'worker']) {
    result[where].forEach((v, i) =>
      assert.ok(Math.abs(v - expected[i]) < 1e-6, `${where}[${i}] = ${v}`),
    );
  }
  // The pool ran seed 001 as two heads, one per worker.
  result.pool.forEach((v, i) =>
    assert.ok(Math.abs(v - expected[i % 4]) < 1e-6, `pool[${i}] = ${v}`),
  );
  // Chromium has had relaxed SIMD since version 114: by default the page and
  // its workers load the relaxed build.
  assert.equal(result.relaxed, true, 'Chromium validates relaxed SIMD');
  assert.equal(result.simdArch, 'sse2+relaxed_madd');
  assert.equal(result.workerSimdArch, 'sse2+relaxed_madd');
  // attnscope/tokenizer with gpt-tokenizer's vocabulary, resolved by the bundler or the import map.
  assert.deepEqual(result.tokens, [15496, 995], 'GPT-2 tokens of "Hello world"');
  assert.deepEqual(errors, []);
  console.log(
    `browser: seed 001 and GPT-2 tokens ok on the page, in the worker and in a pool at ${url} (${result.simdArch})`,
  );
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
