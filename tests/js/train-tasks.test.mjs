// The head scores of "Train it yourself" (web/app/src/train/head-scores.ts): the induction
// score of made-up attention is what its definition says, and the content check tells a
// head that reads the letter before a key from one that looks a fixed distance back; the
// copy task's sequences have their answers where an induction head, and no fixed distance,
// finds them.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import { loadTrainModules } from './app-train.mjs';

let headScores, namedHeads, tasks;
before(async () => ({ headScores, namedHeads, tasks } = await loadTrainModules()));

/** Attention (H = 2, T, T) of a made-up layer: head 0 on the induction keys, head 1 `back` places back. */
function madeUp(tokens, back) {
  const T = tokens.length;
  const w = new Float32Array(2 * T * T);
  for (let q = 0; q < T; q++) {
    const keys = headScores.patternKeys('induction', tokens, q);
    if (keys.length === 0) w[q * T + q] = 1;
    else for (const k of keys) w[q * T + k] = 1 / keys.length;
    w[(T + q) * T + Math.max(0, q - back)] = 1;
  }
  return w;
}

test('head scores: a made-up induction head is named; the content check tells it from a fixed distance', () => {
  const tokens = [0, 1, 2, 3, 4, 5, 2, 3, 4, 5, 2, 3];
  // Query 6 holds 2, first seen at 2: its induction key is 3.
  assert.deepEqual(headScores.patternKeys('induction', tokens, 6), [3]);
  assert.deepEqual(headScores.patternKeys('induction', tokens, 10), [3, 7]);
  assert.deepEqual(headScores.patternKeys('sameWord', tokens, 10), [2, 6]);
  assert.deepEqual(headScores.patternKeys('previousToken', tokens, 4), [3]);
  assert.deepEqual(headScores.patternKeys('induction', tokens, 0), []);
  // Layer 2 of the made-up model: head 0 induction, head 1 three places back (which is the
  // induction key of this sequence's repeat, found by position).
  const attend = (t) => [madeUp(t, 1), madeUp(t, 3)];
  const scored = headScores.scoreHeads([{ tokens, attentions: attend(tokens) }], 2, 2);
  const named = namedHeads.namedFor('induction', scored.card);
  assert.deepEqual(named.map((s) => `L${s.layer}H${s.head}`).sort(), ['L0H0', 'L1H0', 'L1H1']);
  const byName = Object.fromEntries(scored.card.heads.map((h) => [h.head, h]));
  assert.equal(byName.L1H0.induction, 1);
  assert.equal(byName.L1H1.induction, 1);
  assert.equal(byName.L0H1.previousToken, 1);
  // Changing the earlier copies: the head that matched letters loses its keys; the one
  // that looked three places back keeps them.
  const changed = headScores.inductionWithCopiesChanged(attend, [tokens], 2, 2, 8);
  assert.ok(changed[2] < 0.5, `content head ${changed[2]}`);
  assert.equal(changed[3], 1);
  // A sequence that holds every token of the vocabulary cannot be changed: skipped.
  assert.deepEqual(headScores.inductionWithCopiesChanged(attend, [tokens], 2, 2, 6), [0, 0, 0, 0]);
});

test('copy task: answers only in the repeat, found by the letter before them, at distances that vary', () => {
  const task = tasks.taskOf('copy', '');
  const distances = new Set();
  const { tokens, answers } = tasks.batchAt(task, 3, 7);
  const T = task.length;
  for (let b = 0; b < task.batch; b++) {
    const s = Array.from(tokens.subarray(b * T, (b + 1) * T));
    for (let t = 0; t < T; t++) {
      const earlier = s.slice(0, t).lastIndexOf(s[t]);
      // The only letters seen before are those of the repeat, each seen once before.
      assert.equal(s.slice(0, t).filter((x) => x === s[t]).length, earlier < 0 ? 0 : 1);
      // A prediction has a known answer exactly when its letter was seen before and a
      // next letter exists: the letter after that earlier copy.
      assert.equal(answers[b * T + t], earlier >= 0 && t < T - 1, `sequence ${b}, position ${t}`);
      if (answers[b * T + t]) {
        assert.equal(s[t + 1], s[earlier + 1]);
        distances.add(t - earlier);
      }
    }
  }
  assert.ok(distances.size >= 4, `distances ${[...distances]}`);
});
