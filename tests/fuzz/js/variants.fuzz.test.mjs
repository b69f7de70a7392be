// Randomized checks of the attention variants with fast-check: random shapes,
// kvShape, window, sinks, rope and ALiBi. A call the contract allows must give
// a finite output equal to the double-precision reference (and the pool's split
// must equal one engine bit for bit); a call it forbids must be an
// AttnScopeError naming the argument; garbage in the variant fields gives one
// or the other, never anything else. Runs per property: FUZZ_JS_RUNS (default 300).
import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import fc from 'fast-check';

import { AttnScopeError, createAttnScope } from 'attnscope';
import { createAttnScopePool } from 'attnscope/worker';

import { assertClose } from '../../js/support.mjs';
import { variantAttention } from 'attnscope/reference';

const runs = Number(process.env.FUZZ_JS_RUNS ?? 300);
const engine = await createAttnScope();
const pool = createAttnScopePool({ workers: 3, minSplitFlops: 0 });
after(() => pool.terminate());

const call = fc
  .record({
    batch: fc.integer({ min: 1, max: 3 }),
    // Mostly valid, now and then one thing wrong.
    kvHeads: fc.integer({ min: 1, max: 3 }),
    group: fc.integer({ min: 1, max: 3 }),
    badHeads: fc.option(fc.integer({ min: 1, max: 6 }), { freq: 8 }),
    queryLength: fc.integer({ min: 1, max: 9 }),
    extraKeys: fc.oneof(
      { weight: 8, arbitrary: fc.integer({ min: 0, max: 70 }) },
      { weight: 1, arbitrary: fc.integer({ min: -3, max: -1 }) },
    ),
    d: fc.oneof(
      { weight: 6, arbitrary: fc.constantFrom(2, 4, 6, 8) },
      { weight: 1, arbitrary: fc.integer({ min: 1, max: 9 }) },
    ),
    dv: fc.integer({ min: 1, max: 5 }),
    rank3: fc.boolean(),
    causal: fc.boolean(),
    window: fc.option(
      fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 1, max: 20 }) },
        { weight: 1, arbitrary: fc.constantFrom(0, -1, 1.5, NaN, 2 ** 31) },
      ),
    ),
    sinks: fc.option(
      fc.oneof(
        { weight: 8, arbitrary: fc.integer({ min: 0, max: 5 }) },
        { weight: 1, arbitrary: fc.constantFrom(-1, 0.5, 100) },
      ),
    ),
    ropeBase: fc.option(
      fc.oneof(
        { weight: 8, arbitrary: fc.constantFrom(10000, 10, 1.5, 1e6) },
        { weight: 1, arbitrary: fc.constantFrom(0, -1, NaN, Infinity) },
      ),
    ),
    alibi: fc.boolean(),
    trace: fc.boolean(),
    seed: fc.integer(),
  })
  .map((c) => {
    c.heads = c.badHeads ?? c.kvHeads * c.group;
    c.keyLength = Math.max(1, c.queryLength + c.extraKeys);
    const B = c.rank3 ? 1 : c.batch;
    let state = c.seed >>> 0;
    const next = () => ((state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32) * 2 - 1;
    const floats = (n) => Float32Array.from({ length: n }, next);
    const dims = {
      B,
      H: c.heads,
      Hkv: c.kvHeads,
      Tq: c.queryLength,
      Tk: c.keyLength,
      d: c.d,
      dv: c.dv,
    };
    const lead = c.rank3 ? [] : [B];
    const mask = { causal: c.causal };
    if (c.window !== null) mask.window = c.window;
    if (c.sinks !== null) mask.sinks = c.sinks;
    const args = {
      q: floats(B * c.heads * c.queryLength * c.d),
      k: floats(B * c.kvHeads * c.keyLength * c.d),
      v: floats(B * c.kvHeads * c.keyLength * c.dv),
      shape: [...lead, c.heads, c.queryLength, c.d],
      kvShape: [...lead, c.kvHeads, c.keyLength, c.d],
      dv: c.dv,
      mask,
      trace: c.trace,
    };
    if (c.ropeBase !== null) args.rope = { base: c.ropeBase };
    if (c.alibi) args.bias = 'alibi';
    return { c, dims, args };
  });

/** The argument the contract names for the first thing wrong with a call, or undefined when it is valid. */
function expectedError({ c }) {
  const positiveInt = (x) => Number.isInteger(x) && x >= 1 && x <= 2 ** 30;
  if (c.heads % c.kvHeads !== 0) return /kvShape has \d+ kv heads, which does not divide/;
  if (c.queryLength > c.keyLength) return /more than kvShape's Tk/;
  if (c.window !== null && !positiveInt(c.window)) return /mask\.window must be a positive integer/;
  if (c.sinks !== null && !(Number.isInteger(c.sinks) && c.sinks >= 0))
    return /mask\.sinks must be a non-negative integer/;
  if (c.sinks !== null && c.sinks > c.keyLength) return /mask\.sinks is \d+, more than Tk/;
  if (c.ropeBase !== null && !(Number.isFinite(c.ropeBase) && c.ropeBase > 0))
    return /rope\.base must be a finite number/;
  if (c.ropeBase !== null && c.d % 2 !== 0) return /rope needs an even d_k/;
  return undefined;
}

test('random variant calls: a finite result equal to the reference, or the AttnScopeError the contract names', () => {
  const heapBefore = engine.memoryUsage().heapInUse;
  let accepted = 0;
  fc.assert(
    fc.property(call, (x) => {
      const expected = expectedError(x);
      let result;
      try {
        result = engine.attention(x.args);
      } catch (e) {
        assert.ok(e instanceof AttnScopeError, `threw ${e?.constructor?.name}: ${e?.message}`);
        assert.ok(expected, `a valid call was refused: ${e.message}`);
        assert.match(e.message, expected);
        return;
      }
      assert.equal(expected, undefined, `an invalid call was accepted (expected ${expected})`);
      accepted++;
      assert.ok(result.output.data.every(Number.isFinite), 'finite output');
      const { c, dims } = x;
      const ref = variantAttention(x.args.q, x.args.k, x.args.v, dims, {
        causal: c.causal,
        window: c.window ?? undefined,
        sinks: c.sinks ?? 0,
        ropeBase: c.ropeBase ?? undefined,
        alibi: c.alibi,
      });
      assertClose(result.output.data, ref.output, { atol: 3e-5, rtol: 3e-5, what: 'output' });
      if (c.trace)
        assertClose(result.trace.weights.data, ref.weights, {
          atol: 3e-5,
          rtol: 3e-5,
          what: 'weights',
        });
    }),
    { numRuns: runs * 3 },
  );
  console.log(`# ${runs * 3} random variant calls, ${accepted} accepted`);
  assert.ok(accepted > runs / 10, `only ${accepted} valid calls were generated`);
  assert.equal(engine.memoryUsage().heapInUse, heapBefore, 'the wasm heap changed');
});

test('the pool gives exactly what one engine gives for random variant calls, result or error', async () => {
  await fc.assert(
    fc.asyncProperty(call, async ({ args }) => {
      let expected;
      try {
        expected = { ok: engine.attention(args) };
      } catch (e) {
        expected = { error: e.message };
      }
      try {
        assert.deepEqual({ ok: await pool.attention(args) }, expected);
      } catch (e) {
        if (e instanceof assert.AssertionError) throw e;
        assert.deepEqual({ error: e.message }, expected);
      }
    }),
    { numRuns: runs },
  );
});

const junk = fc.oneof(
  fc.constantFrom(
    undefined,
    null,
    0,
    -1,
    1.5,
    NaN,
    Infinity,
    2 ** 31,
    '3',
    'alibi',
    true,
    [],
    [1],
    [1, 2, 3, 4],
    [0, 1, 1, 1],
  ),
  fc.object({ maxDepth: 1 }),
  fc.array(fc.integer({ min: -2, max: 6 }), { maxLength: 5 }),
);

test('garbage in kvShape, rope, bias, window and sinks: a finite result or an AttnScopeError', () => {
  const heapBefore = engine.memoryUsage().heapInUse;
  const base = {
    q: new Float32Array(2 * 3 * 4).fill(0.5),
    k: new Float32Array(2 * 3 * 4).fill(0.25),
    v: new Float32Array(2 * 3 * 4).fill(1),
    shape: [2, 3, 4],
  };
  fc.assert(
    fc.property(
      fc.record(
        {
          kvShape: junk,
          rope: junk,
          bias: junk,
          window: junk,
          sinks: junk,
          ropeBase: junk,
          alibi: junk,
          values: junk,
        },
        { requiredKeys: [] },
      ),
      (g) => {
        const args = { ...base, mask: {} };
        if ('kvShape' in g) args.kvShape = g.kvShape;
        if ('rope' in g) args.rope = 'ropeBase' in g ? { base: g.ropeBase } : g.rope;
        if ('bias' in g) args.bias = 'values' in g ? { alibi: g.alibi, values: g.values } : g.bias;
        if ('window' in g) args.mask.window = g.window;
        if ('sinks' in g) args.mask.sinks = g.sinks;
        try {
          const r = engine.attention(args);
          assert.ok(r.output.data.every(Number.isFinite), 'finite output');
        } catch (e) {
          assert.ok(e instanceof AttnScopeError, `threw ${e?.constructor?.name}: ${e?.message}`);
          assert.match(
            e.message,
            /^attention: .*(kvShape|rope|bias|window|sinks|k has|v has|Tq|kv heads|d_k)/s,
          );
        }
      },
    ),
    { numRuns: runs * 3 },
  );
  assert.equal(engine.memoryUsage().heapInUse, heapBefore, 'the wasm heap changed');
  assert.ok(engine.attention(base).output.data.every(Number.isFinite));
});
