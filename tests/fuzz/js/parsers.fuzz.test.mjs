// Randomized (coverage-less) fuzzing of the site's parsers with fast-check:
// page state from untrusted JSON (sanitizeState), state in the URL fragment
// (decodeState) and imported weights files (parseWeightsJson), plus the
// tokenizer. Each must return something valid or throw an Error with a
// readable message; never a TypeError/RangeError, a hang or an invalid state.
// Runs per property: FUZZ_JS_RUNS (default 300).
import assert from 'node:assert/strict';
import { deflateRawSync } from 'node:zlib';
import { before, test } from 'node:test';
import fc from 'fast-check';

import { loadAppModules } from './compile-app.mjs';

const runs = Number(process.env.FUZZ_JS_RUNS ?? 300);
let app;
before(async () => {
  app = await loadAppModules();
});

const kEditKey = /^(x|wq|wk|wv|wo|w1|w2):\d{1,5}(,\d{1,5}){1,2}$/;

/** Every invariant the rest of the page relies on. */
function assertValidState(s) {
  const L = app.state.kLimits;
  assert.equal(s.v, 1);
  assert.equal(typeof s.text, 'string');
  assert.ok(s.text.length <= L.textChars, 'text too long');
  for (const k of ['dModel', 'dK', 'dV', 'heads', 'hidden', 'seed']) {
    assert.ok(Number.isInteger(s[k]) && s[k] >= L[k][0] && s[k] <= L[k][1], `${k}=${s[k]}`);
  }
  assert.ok(Number.isFinite(s.temperature) && s.temperature > 0);
  assert.ok(['sqrt', 'none', 'temperature'].includes(s.scaleMode));
  assert.ok(['none', 'causal', 'padding', 'causal+padding'].includes(s.mask));
  assert.ok(['relu', 'gelu'].includes(s.activation));
  assert.equal(typeof s.positional, 'boolean');
  assert.equal(typeof s.block, 'boolean');
  assert.equal(Object.getPrototypeOf(s.edits), Object.prototype);
  const keys = Object.keys(s.edits);
  assert.ok(keys.length <= L.edits);
  for (const k of keys) assert.ok(kEditKey.test(k) && Number.isFinite(s.edits[k]), `edit ${k}`);
  assert.ok(s.preset === null || /^[a-z0-9-]{1,40}$/.test(s.preset));
  for (const k of ['seq', 'head', 'query', 'key'])
    assert.ok(Number.isInteger(s.sel[k]) && s.sel[k] >= 0);
}

/** A refusal must be a plain Error with a message meant for people. */
function assertReadableError(e) {
  assert.ok(e instanceof Error, `not an Error: ${e}`);
  assert.ok(
    !(e instanceof TypeError) && !(e instanceof RangeError),
    `internal error leaked: ${e.stack}`,
  );
  assert.ok(e.message.length > 5);
}

// Values that tend to break hand-written checks.
const nasty = fc.oneof(
  fc.anything({ withBigInt: false, withNullPrototype: true, withObjectString: true, maxDepth: 3 }),
  fc.constantFrom(
    NaN,
    Infinity,
    -Infinity,
    -0,
    1e308,
    -1e308,
    2 ** 53,
    0.5,
    '',
    '__proto__',
    'constructor',
    null,
    [],
    {},
  ),
  fc.integer(),
  fc.double(),
  fc.string({ unit: 'binary', maxLength: 50 }),
);
const stateKeys = [
  'v',
  'text',
  'dModel',
  'dK',
  'dV',
  'heads',
  'seed',
  'positional',
  'scaleMode',
  'temperature',
  'mask',
  'block',
  'hidden',
  'activation',
  'edits',
  'preset',
  'sel',
  'stage',
  'tab',
  '__proto__',
  'constructor',
];
const editKey = fc.oneof(
  fc
    .tuple(
      fc.constantFrom('x', 'wq', 'wk', 'wv', 'wo', 'w1', 'w2', 'zz', '__proto__'),
      fc.array(fc.nat(99999), { minLength: 0, maxLength: 4 }),
    )
    .map(([n, ix]) => `${n}:${ix.join(',')}`),
  fc.string({ maxLength: 20 }),
);
const hostileState = fc
  .record(Object.fromEntries(stateKeys.map((k) => [k, nasty])), { requiredKeys: [] })
  .chain((base) =>
    fc
      .tuple(fc.dictionary(editKey, nasty, { maxKeys: 30 }), fc.boolean())
      .map(([edits, useEdits]) => ({ ...base, edits: useEdits ? edits : base.edits })),
  );

test('sanitizeState turns any JSON value into a valid state, idempotently', () => {
  fc.assert(
    fc.property(fc.oneof(hostileState, nasty, fc.jsonValue()), (raw) => {
      const s = app.state.sanitizeState(raw);
      assertValidState(s);
      // JSON has no -0, so compare what a link would carry.
      const json = (v) => JSON.parse(JSON.stringify(v));
      assert.deepEqual(app.state.sanitizeState(json(s)), json(s));
    }),
    { numRuns: runs * 4 },
  );
});

test('sanitizeState through JSON text: __proto__ keys cannot pollute prototypes', () => {
  const s = app.state.sanitizeState(
    JSON.parse('{"__proto__": {"polluted": 1}, "edits": {"__proto__": {"x": 1}, "wq:0,0": 2}}'),
  );
  assertValidState(s);
  assert.equal({}.polluted, undefined);
  assert.deepEqual(s.edits, { 'wq:0,0': 2 });
});

const b64url = (bytes) => Buffer.from(bytes).toString('base64url');

test('decodeState: any fragment gives null, a valid state or a readable error', async () => {
  const fragments = fc.oneof(
    fc.string({ maxLength: 300 }),
    fc
      .string({
        unit: fc.constantFrom(
          ...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_',
        ),
        maxLength: 400,
      })
      .map((s) => `#s=${s}`),
    fc.uint8Array({ maxLength: 300 }).map((b) => `#s=${b64url(b)}`),
    // Valid deflate around arbitrary text and JSON: the JSON and state layers are reached.
    fc
      .oneof(
        fc.string({ maxLength: 200 }),
        fc.jsonValue().map((v) => JSON.stringify(v)),
        hostileState.map((v) => JSON.stringify(v) ?? 'null'),
      )
      .map((t) => `#s=${b64url(deflateRawSync(Buffer.from(t)))}`),
  );
  await fc.assert(
    fc.asyncProperty(fragments, async (hash) => {
      try {
        const s = await app.urlState.decodeState(hash);
        if (s !== null) assertValidState(s);
      } catch (e) {
        assertReadableError(e);
      }
    }),
    { numRuns: runs * 2 },
  );
});

test('decodeState: encoded states round-trip; damaged ones are refused', async () => {
  await fc.assert(
    fc.asyncProperty(hostileState, fc.nat(), fc.nat(255), async (raw, at, flip) => {
      const s = app.state.sanitizeState(raw);
      const encoded = await app.urlState.encodeState(s);
      assert.deepEqual(
        await app.urlState.decodeState(`#s=${encoded}`),
        JSON.parse(JSON.stringify(s)),
      );
      // One changed character: either still decodes to a valid state or is refused readably.
      const chars = [...encoded];
      const i = at % chars.length;
      chars[i] = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'[flip % 64];
      try {
        const d = await app.urlState.decodeState(`#s=${chars.join('')}`);
        if (d !== null) assertValidState(d);
      } catch (e) {
        assertReadableError(e);
      }
    }),
    { numRuns: runs },
  );
});

test('decodeState: size limits before and after decompression (deflate bomb, huge fragment)', async () => {
  const bomb = b64url(deflateRawSync(Buffer.alloc(50_000_000, 0x20)));
  assert.ok(bomb.length < 200_000, `bomb is ${bomb.length} chars`);
  await assert.rejects(app.urlState.decodeState(`#s=${bomb}`), /could not be read|too large/);
  await assert.rejects(app.urlState.decodeState(`#s=${'A'.repeat(1_000_000)}`), /too large/);
  await assert.rejects(
    app.urlState.decodeState(`#s=${b64url(deflateRawSync(Buffer.from('{"text": ')))}`),
    /not valid JSON/,
  );
});

/** The file "Export weights" writes for a state. */
function exportedWeights(state) {
  const model = app.model.buildModel(state);
  const out = {
    format: 'attnscope-weights',
    dModel: state.dModel,
    dK: state.dK,
    dV: state.dV,
    heads: state.heads,
    hidden: state.hidden,
    seed: state.seed,
  };
  for (const [name, w] of Object.entries(model.weights))
    out[name] = Array.from({ length: w.rows }, (_, i) =>
      Array.from(w.data.subarray(i * w.cols, (i + 1) * w.cols)),
    );
  return out;
}

const smallDims = fc.record({
  dModel: fc.integer({ min: 1, max: 6 }),
  dK: fc.integer({ min: 1, max: 4 }),
  dV: fc.integer({ min: 1, max: 4 }),
  heads: fc.integer({ min: 1, max: 3 }),
  hidden: fc.integer({ min: 1, max: 8 }),
  seed: fc.nat(1000),
});

test('parseWeightsJson: exported weights round-trip', () => {
  fc.assert(
    fc.property(smallDims, (dims) => {
      const state = app.state.sanitizeState({
        ...app.state.defaultState(),
        ...dims,
        text: 'a b c',
      });
      const file = exportedWeights(state);
      const { state: got, found } = app.weightsImport.parseWeightsJson(
        JSON.stringify(file),
        app.state.defaultState(),
      );
      assert.equal(found, 6);
      assertValidState(got);
      assert.deepEqual(exportedWeights({ ...got, text: 'a b c' }), file);
    }),
    { numRuns: Math.max(20, runs / 5) },
  );
});

// Mutations of a valid file: wrong sizes, non-numbers, missing rows, hostile keys.
const mutatedWeights = fc
  .tuple(
    smallDims,
    fc.array(
      fc.tuple(
        fc.constantFrom(
          'wq',
          'wk',
          'wv',
          'wo',
          'w1',
          'w2',
          'dModel',
          'heads',
          'hidden',
          '__proto__',
          'edits',
        ),
        fc.nat(20),
        fc.nat(20),
        nasty,
      ),
      { maxLength: 4 },
    ),
  )
  .map(([dims, muts]) => {
    const state = app.state.sanitizeState({ ...app.state.defaultState(), ...dims });
    const file = exportedWeights(state);
    for (const [name, i, j, value] of muts) {
      const m = file[name];
      if (
        Array.isArray(m) &&
        m.length &&
        Array.isArray(m[i % m.length]) &&
        m[i % m.length].length
      ) {
        const row = m[i % m.length];
        if (j % 3 === 0)
          m[i % m.length] = value; // a whole row replaced
        else if (j % 3 === 1)
          row.pop(); // a ragged row
        else row[j % row.length] = value; // one value replaced
      } else file[name] = value;
    }
    return JSON.stringify(file);
  });

test('parseWeightsJson: any text gives a valid state or a readable error', () => {
  const texts = fc.oneof(
    fc.string({ maxLength: 200 }),
    fc.jsonValue().map((v) => JSON.stringify(v)),
    hostileState.map((v) => JSON.stringify(v) ?? ''),
    mutatedWeights,
  );
  fc.assert(
    fc.property(texts, (text) => {
      try {
        const { state, found } = app.weightsImport.parseWeightsJson(text, app.state.defaultState());
        assertValidState(state);
        assert.ok(found >= 1 && found <= 6);
      } catch (e) {
        assertReadableError(e);
      }
    }),
    { numRuns: runs * 2 },
  );
});

test('parseWeightsJson: sizes that need more values than a page state holds are refused before copying', () => {
  const dims = { dModel: 512, dK: 256, dV: 256, heads: 16, hidden: 2048 };
  // The arrays are empty: the refusal must come from the sizes, not from walking them.
  const t0 = performance.now();
  assert.throws(
    () =>
      app.weightsImport.parseWeightsJson(
        JSON.stringify({ ...dims, wq: [], w1: [] }),
        app.state.defaultState(),
      ),
    /too many values/,
  );
  assert.ok(performance.now() - t0 < 1000);
  assert.throws(
    () => app.weightsImport.parseWeightsJson('null', app.state.defaultState()),
    /JSON object/,
  );
  assert.throws(
    () => app.weightsImport.parseWeightsJson('[1,2]', app.state.defaultState()),
    /JSON object/,
  );
  assert.throws(
    () => app.weightsImport.parseWeightsJson('{"wq": ', app.state.defaultState()),
    /not valid JSON/,
  );
});

test('tokenize: arbitrary and very long text stays bounded and fast', () => {
  fc.assert(
    fc.property(fc.string({ unit: 'grapheme', maxLength: 500 }), (text) => {
      const tokens = app.tokenize.tokenize(text);
      assert.ok(tokens.length <= app.tokenize.kMaxTokens);
      for (const t of tokens) assert.ok(t.length > 0 && !/\s/.test(t));
    }),
    { numRuns: runs },
  );
  const big = 'word, '.repeat(200_000); // 1.2 MB
  const t0 = performance.now();
  assert.equal(app.tokenize.tokenize(big).length, app.tokenize.kMaxTokens);
  assert.ok(performance.now() - t0 < 2000, `tokenize of 1.2 MB took ${performance.now() - t0} ms`);
});
