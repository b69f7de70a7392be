// Randomized fuzzing of model.forward's analysis options (interventions,
// attribution, logit lens) with fast-check: near-valid options with any
// field of any type. Each call returns finite results or throws
// AttnScopeError; afterwards the heap is where it was and the clean run is
// unchanged. Valid interventions also match the double reference.
// Runs per property: FUZZ_JS_RUNS (default 300).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';

import { AttnScopeError, createAttnScope } from 'attnscope';
import { gpt2ForwardReference } from 'attnscope/reference';
import { tinyGpt2 } from '../../js/support-gpt2.mjs';

const runs = Number(process.env.FUZZ_JS_RUNS ?? 300);
const engine = await createAttnScope();
const tiny = tinyGpt2({
  layers: 2,
  heads: 2,
  dModel: 8,
  vocabSize: 11,
  contextLength: 8,
  seed: 12,
});
const model = engine.loadModel(tiny.bytes);
const tokens = [1, 5, 2, 9, 0];

const index = fc.oneof(
  { weight: 6, arbitrary: fc.integer({ min: 0, max: 5 }) },
  fc.constantFrom(-1, 1.5, NaN, Infinity, 2 ** 32, '1', null, undefined),
);
const head = fc.record({ layer: index, head: index });
const interventions = fc.record(
  {
    ablate: fc.array(
      fc.record(
        { layer: index, head: index, mode: fc.constantFrom('zero', 'mean', 'half', 1, undefined) },
        { requiredKeys: ['layer', 'head'] },
      ),
      { maxLength: 4 },
    ),
    maskTokens: fc.oneof(fc.array(index, { maxLength: 6 }), fc.constantFrom(3, 'x', null)),
    replace: fc.array(fc.record({ layer: index, head: index, from: fc.oneof(head, index) }), {
      maxLength: 3,
    }),
  },
  { requiredKeys: [] },
);
const options = fc.record(
  {
    interventions: fc.oneof({ weight: 8, arbitrary: interventions }, fc.constantFrom(null, 1, [])),
    attribution: fc.constantFrom(true, false, 1, undefined),
    logitLens: fc.oneof(fc.record({ topK: index }, { requiredKeys: [] }), fc.constantFrom(true, 2)),
    trace: fc.constantFrom(true, false, undefined),
  },
  { requiredKeys: [] },
);

const finite = (t) => t.data.every((x) => Number.isFinite(x));

test('model.forward with random analysis options: finite results or AttnScopeError, nothing leaked', () => {
  const clean = model.forward({ tokens });
  const before = engine.memoryUsage().heapInUse;
  fc.assert(
    fc.property(options, (extra) => {
      try {
        const r = model.forward({ tokens, ...extra });
        assert.ok(finite(r.logits));
        for (const t of [...(r.diff?.attentions ?? []), ...(r.attribution?.rollout ?? [])]) {
          assert.ok(finite(t));
        }
      } catch (e) {
        if (!(e instanceof AttnScopeError) || !e.message.startsWith('model.forward: ')) throw e;
      }
      assert.equal(engine.memoryUsage().heapInUse, before);
    }),
    { numRuns: runs },
  );
  assert.deepEqual(model.forward({ tokens }).logits.data, clean.logits.data);
});

const layer = fc.integer({ min: 0, max: 1 });
const validInterventions = fc.record({
  ablate: fc.uniqueArray(fc.record({ layer, head: layer, mode: fc.constantFrom('zero', 'mean') }), {
    maxLength: 2,
    selector: (a) => `${a.layer}.${a.head}`,
  }),
  maskTokens: fc.uniqueArray(fc.integer({ min: 0, max: tokens.length - 1 }), { maxLength: 3 }),
  replace: fc.uniqueArray(
    fc.record({ layer, head: layer, from: fc.record({ layer, head: layer }) }),
    {
      maxLength: 2,
      selector: (r) => `${r.layer}.${r.head}`,
    },
  ),
});

test('valid random interventions match the double reference', () => {
  fc.assert(
    fc.property(validInterventions, (iv) => {
      const targets = [...iv.ablate, ...iv.replace].map((x) => `${x.layer}.${x.head}`);
      fc.pre(new Set(targets).size === targets.length);
      const got = model.forward({ tokens, interventions: iv });
      const want = gpt2ForwardReference(tiny.weights, tiny.config, tokens, iv);
      got.logits.data.forEach((x, i) =>
        assert.ok(Math.abs(x - want.logits[i]) < 1e-4, `logits[${i}]`),
      );
    }),
    { numRuns: Math.min(runs, 100) },
  );
});
