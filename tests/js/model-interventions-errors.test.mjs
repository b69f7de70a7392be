// Bad analysis options of model.forward (interventions, attribution, logit
// lens): each refused with an AttnScopeError naming the argument, the model
// still usable afterwards and wasm memory exactly as it was.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import { engine } from './engine.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const tiny = tinyGpt2({ layers: 2, heads: 2, seed: 6 });
const tokens = [1, 2, 3, 4];

const bad = [
  [{ interventions: 'ablate' }, /interventions must be an object/],
  [{ interventions: { ablation: [] } }, /interventions has an unknown field 'ablation'/],
  [{ interventions: { ablate: { layer: 0, head: 0 } } }, /interventions.ablate must be an array/],
  [
    { interventions: { ablate: [{ layer: 2, head: 0 }] } },
    /interventions.ablate\[0\].layer .*got 2/,
  ],
  [
    { interventions: { ablate: [{ layer: 0, head: -1 }] } },
    /interventions.ablate\[0\].head .*got -1/,
  ],
  [{ interventions: { ablate: [{ layer: 0, head: 1.5 }] } }, /interventions.ablate\[0\].head/],
  [{ interventions: { ablate: [{ layer: 0 }] } }, /interventions.ablate\[0\].head .*got undefined/],
  [
    { interventions: { ablate: [{ layer: 0, head: 0, mode: 'half' }] } },
    /interventions.ablate\[0\].mode must be 'zero' or 'mean', got 'half'/,
  ],
  [
    { interventions: { ablate: [{ layer: 0, head: 0, heads: 1 }] } },
    /interventions.ablate\[0\] has an unknown field 'heads'/,
  ],
  [
    {
      interventions: {
        ablate: [
          { layer: 1, head: 0 },
          { layer: 1, head: 0, mode: 'mean' },
        ],
      },
    },
    /interventions.ablate\[1\] targets layer 1 head 0 again/,
  ],
  [
    {
      interventions: {
        ablate: [{ layer: 0, head: 1 }],
        replace: [{ layer: 0, head: 1, from: { layer: 1, head: 0 } }],
      },
    },
    /interventions.replace\[0\] targets layer 0 head 1 again/,
  ],
  [
    { interventions: { replace: [{ layer: 0, head: 0 }] } },
    /interventions.replace\[0\].from must be an object/,
  ],
  [
    { interventions: { replace: [{ layer: 0, head: 0, from: { layer: 5, head: 0 } }] } },
    /interventions.replace\[0\].from.layer .*got 5/,
  ],
  [{ interventions: { maskTokens: [4] } }, /interventions.maskTokens\[0\] .*got 4 \(at most 3\)/],
  [{ interventions: { maskTokens: [0, '1'] } }, /interventions.maskTokens\[1\] .*got string/],
  [
    { interventions: { maskTokens: [2, 1, 2] } },
    /interventions.maskTokens\[2\] repeats position 2/,
  ],
  [{ attribution: 1 }, /attribution must be a boolean/],
  [{ attribution: true, trace: false }, /attribution needs trace/],
  [{ logitLens: { topK: 5 }, trace: false }, /logitLens needs trace/],
  [{ logitLens: { topK: 0 } }, /logitLens.topK must be a positive integer, got 0/],
  [{ logitLens: { topK: 12 } }, /logitLens.topK .*got 12 \(at most 11\)/],
  [{ logitLens: 3 }, /logitLens must be an object/],
  [{ logitLens: { k: 3 } }, /logitLens has an unknown field 'k'/],
];

test('bad analysis options are refused, naming the argument; nothing leaks and the model stays usable', () => {
  const model = engine.loadModel(tiny.bytes);
  const clean = model.forward({ tokens });
  const before = engine.memoryUsage().heapInUse;
  for (const [extra, message] of bad) {
    assert.throws(
      () => model.forward({ tokens, ...extra }),
      (e) =>
        e instanceof AttnScopeError &&
        message.test(e.message) &&
        e.message.startsWith('model.forward: '),
      `${JSON.stringify(extra)} → ${message}`,
    );
    assert.equal(engine.memoryUsage().heapInUse, before, JSON.stringify(extra));
  }
  assert.deepEqual(model.forward({ tokens }).logits.data, clean.logits.data);
  model.dispose();
});
