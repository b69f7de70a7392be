// Security of the site: no HTML sinks in the sources, a strict
// Content-Security-Policy on the built page, and script injection through
// tokens, the URL and imported JSON rendering as inert text.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';

import { repo, useSite } from './harness.mjs';
import { assertStillWorks, change, linkFor, openPage } from './robustness-helpers.mjs';

// ---------- static checks (no browser) ----------

function sourceFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist') continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx|mts|js|mjs|html)$/.test(name)) out.push(path);
  }
  return out;
}

// Every way of turning a string into markup or code.
const kSinks =
  /\b(innerHTML|dangerouslySetInnerHTML|outerHTML|insertAdjacentHTML|document\.write(ln)?|createContextualFragment|srcdoc|parseFromString|setHTMLUnsafe)\b|\beval\s*\(|\bnew\s+Function\s*\(|\bset(Timeout|Interval)\s*\(\s*['"`]/;

test('no source under web/ writes markup or code from strings', () => {
  const files = sourceFiles(join(repo, 'web'));
  assert.ok(files.length > 20, `only ${files.length} source files found`);
  const hits = [];
  for (const file of files) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (kSinks.test(line)) hits.push(`${relative(repo, file)}:${i + 1}: ${line.trim()}`);
      });
  }
  assert.deepEqual(hits, []);
});

function builtCsp() {
  const html = readFileSync(join(repo, 'web/app/dist/index.html'), 'utf8');
  const metas = [
    ...html.matchAll(/<meta\s+http-equiv="Content-Security-Policy"\s+content="([^"]*)"/gi),
  ];
  assert.equal(metas.length, 1, 'exactly one CSP meta in the built index.html');
  const directives = new Map();
  for (const part of metas[0][1]
    .split(';')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [name, ...sources] = part.split(/\s+/);
    directives.set(name.toLowerCase(), sources);
  }
  return { html, directives, metaIndex: metas[0].index };
}

test('the built page has a strict Content-Security-Policy', () => {
  const { html, directives, metaIndex } = builtCsp();
  assert.deepEqual(directives.get('default-src'), ["'self'"]);
  const script = directives.get('script-src') ?? directives.get('default-src');
  assert.ok(script.includes("'wasm-unsafe-eval'"), 'WebAssembly compilation must be allowed');
  assert.ok(!script.includes("'unsafe-inline'"), 'inline script allowed');
  assert.deepEqual(directives.get('object-src'), ["'none'"]);
  assert.deepEqual(directives.get('base-uri'), ["'none'"]);
  for (const [name, sources] of directives) {
    for (const src of sources) {
      assert.notEqual(src, "'unsafe-eval'", `${name} allows 'unsafe-eval'`);
      assert.notEqual(src, "'unsafe-hashes'", `${name} allows 'unsafe-hashes'`);
      // Only the page's own origin and local schemes: no remote origin, no wildcard.
      assert.ok(
        /^('self'|'none'|'wasm-unsafe-eval'|'unsafe-inline'|data:|blob:)$/.test(src),
        `${name} allows ${src}`,
      );
      if (src === "'unsafe-inline'") assert.equal(name, 'style-src', `'unsafe-inline' in ${name}`);
    }
  }
  // The policy must come before any script, and no script may be inline.
  const firstScript = html.search(/<script\b/i);
  assert.ok(firstScript === -1 || metaIndex < firstScript, 'CSP meta after a script');
  for (const m of html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)) {
    assert.match(m[1], /\bsrc=/, 'inline <script> in the built page');
    assert.equal(m[2].trim(), '');
  }
  assert.ok(!/\son[a-z]+\s*=/i.test(html), 'inline event handler attribute in the built page');
});

// ---------- in the browser ----------

const site = useSite();

const kPayloads = [
  '<img src=x onerror="window.__pwned=1;alert(1)">',
  '"><svg onload="window.__pwned=2;alert(2)">',
  '</textarea><script>window.__pwned=3;alert(3)</script>',
  'javascript:window.__pwned=4;alert(4)',
  '<iframe srcdoc="<script>parent.__pwned=5</script>"></iframe>',
  '{{constructor.constructor("window.__pwned=6")()}}',
];
const kPayloadText = kPayloads.join('\n');

/** Nothing ran: no dialog, no flag, no injected element, no CSP report. */
async function assertInert(page, problems) {
  await page.waitForTimeout(300); // let any onerror/onload fire
  assert.equal(await page.evaluate(() => window.__pwned), undefined, 'an injected script ran');
  assert.equal(
    await page
      .locator('img[src="x"], svg[onload], iframe, script:not([src]), [onerror], [onload]')
      .count(),
    0,
  );
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
  assert.deepEqual(problems, []); // a dialog would be listed here
}

test('the page loads and computes under its CSP without violations', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  assert.match(await page.textContent('#status-text'), /Computed by the engine/);
  assert.deepEqual(await page.evaluate(() => window.__cspViolations), []);
  // The policy is enforced: an inline script added now does not run.
  await page.evaluate(() => {
    const s = document.createElement('script');
    s.textContent = 'window.__inline = 1';
    document.body.append(s);
  });
  await page.waitForTimeout(100);
  assert.equal(
    await page.evaluate(() => window.__inline),
    undefined,
    'inline script ran despite the CSP',
  );
  assert.ok(
    (await page.evaluate(() => window.__cspViolations)).some((v) => v.startsWith('script-src')),
  );
  const expected = problems.filter((p) => !/Content Security Policy/.test(p));
  assert.deepEqual(expected, []);
  await page.close();
});

test('script injection through tokens renders as text', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  await change(page, () => page.fill('#text', kPayloadText));
  assert.equal(await page.inputValue('#text'), kPayloadText);
  const chips = await page.$$eval('#chips button.chip', (bs) =>
    bs.map((b) => b.textContent).join(' '),
  );
  assert.ok(chips.includes('onerror') && chips.includes('<') && chips.includes('script'));
  // Views that print tokens: lines, heads and the inspector.
  for (const tab of ['#tab-lines', '#tab-heads', '#tab-bars', '#tab-heatmap']) {
    if (await page.locator(tab).count()) await page.click(tab);
  }
  assert.ok((await page.textContent('#view')).includes('onerror'));
  await assertInert(page, problems);
  await assertStillWorks(page);
  await page.close();
});

test('script injection through a shared link renders as text', async () => {
  const hash = await linkFor({
    text: kPayloadText,
    preset: '<script>alert(7)</script>',
    edits: { '<img src=x onerror=alert(8)>': 1, 'wq:0,0': 0.5 },
  });
  const { page, problems } = await openPage(site.browser, site.server, hash);
  assert.equal(await page.inputValue('#text'), kPayloadText);
  assert.ok((await page.textContent('#chips')).includes('onerror'));
  await assertInert(page, problems);
  // A raw fragment with markup is not state at all: it is ignored, not parsed.
  const raw = await openPage(site.browser, site.server, '#s=<img src=x onerror=alert(9)>');
  await assertInert(raw.page, raw.problems);
  await assertStillWorks(raw.page);
  await page.close();
  await raw.page.close();
});

test('script injection through an imported weights file renders as text', async () => {
  const { page, problems } = await openPage(site.browser, site.server);
  const text = await page.inputValue('#text');
  // Not JSON at all: the parser's message quotes the start of the file.
  await page.setInputFiles('#import-weights', {
    name: '<img src=x onerror=alert(10)>.json',
    mimeType: 'application/json',
    buffer: Buffer.from(kPayloads[0]),
  });
  await page.waitForSelector('#error:not([hidden])');
  assert.match(
    await page.textContent('#error'),
    /Could not import the weights: the file is not valid JSON/,
  );
  assert.ok(
    (await page.textContent('#error')).includes('<img'),
    'the quoted file start is shown as text',
  );
  // JSON whose strings and keys are markup.
  const hostile = {
    format: kPayloads[1],
    dModel: kPayloads[2],
    wq: kPayloads[0],
    [kPayloads[3]]: [[1]],
  };
  await page.setInputFiles('#import-weights', {
    name: 'w.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(hostile)),
  });
  await page.waitForFunction(() =>
    /wq must be/.test(document.getElementById('error')?.textContent ?? ''),
  );
  assert.equal(
    await page.inputValue('#text'),
    text,
    'the visitor’s text was changed by a refused import',
  );
  await assertInert(page, problems);
  await assertStillWorks(page);
  await page.close();
});
