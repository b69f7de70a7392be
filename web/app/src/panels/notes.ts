// Two explanations drawn from the result: the tutorials' printed numbers next to the
// engine's, and what happens to words that appear twice.
import type { RunResult } from '../compute';
import { byId, h } from '../dom';
import { fmt, full } from '../format';
import { kPad } from '../model';
import { kPresets } from '../presets';
import { sliceOf } from '../tensor';

export function renderChecks(r: RunResult, presetId: string | null): void {
  const preset = kPresets.find((p) => p.id === presetId);
  const section = byId('checks');
  section.hidden = !preset || preset.checks.length === 0;
  if (!preset || section.hidden) return;
  const table = h(
    'table',
    { class: 'checks' },
    h('caption', {}, preset.title),
    h(
      'thead',
      {},
      h(
        'tr',
        {},
        h('th', { scope: 'col' }, 'quantity'),
        h('th', { scope: 'col' }, 'the tutorial'),
        h('th', { scope: 'col' }, 'the engine'),
      ),
    ),
  );
  const body = h('tbody');
  preset.checks.forEach((c, k) => {
    const values = c.read(r);
    body.append(
      h(
        'tr',
        {},
        h('th', { scope: 'row' }, c.label),
        h('td', {}, c.tutorial),
        h(
          'td',
          { 'data-check': k, title: values.map(full).join(', ') },
          `[${values.map((v) => (Number.isFinite(v) ? v.toFixed(c.digits) : fmt(v))).join(', ')}]`,
        ),
      ),
    );
  });
  table.append(body);
  byId('checks-body').replaceChildren(table);
}

function rowsEqual(data: Float32Array, width: number, a: number, b: number): boolean {
  for (let k = 0; k < width; k++) if (data[a * width + k] !== data[b * width + k]) return false;
  return true;
}

/** Sequence b's rows at the three points the notes compare: embedding, X and the output. */
function sequenceRows(r: RunResult, b: number) {
  const C = r.model.C;
  const width = r.attention.trace!.concat.shape.at(-1)!;
  const embedding = sliceOf({ data: r.model.embeddings, shape: [r.model.B, r.model.T, C] }, b).data;
  const x = sliceOf(r.x, b).data;
  const out = sliceOf(r.attention.trace!.concat, b).data;
  return { C, width, embedding, x, out };
}

function notesKey(r: RunResult, b: number, repeated: number[][]): string {
  const tokens = r.model.tokens[b];
  const { C, width, embedding, x, out } = sequenceRows(r, b);
  const flags = repeated.map(
    ([a, c]) =>
      `${a},${c}:${+rowsEqual(embedding, C, a, c)}${+rowsEqual(x, C, a, c)}${+rowsEqual(out, width, a, c)}`,
  );
  const causal =
    r.model.maskSpec === 'causal' ||
    (typeof r.model.maskSpec === 'object' && r.model.maskSpec.causal);
  return JSON.stringify([
    repeated.map(([a, c]) => [tokens[a], tokens[c]]),
    flags,
    Boolean(r.positional),
    causal,
  ]);
}

export function renderNotes(r: RunResult, b: number): void {
  const tokens = r.model.tokens[b];
  const groups = new Map<string, number[]>();
  tokens.forEach(
    (t, i) =>
      t !== kPad && groups.set(t.toLowerCase(), [...(groups.get(t.toLowerCase()) ?? []), i]),
  );
  const repeated = [...groups.values()].filter((g) => g.length > 1).slice(0, 6);
  const body = byId('notes-body');
  // The notes change only when the tokens or which rows are identical change: most
  // token edits leave them as they are, and rebuilding them costs a redraw.
  const key = notesKey(r, b, repeated);
  if (body.dataset.key === key) return;
  body.dataset.key = key;
  if (!repeated.length) {
    body.replaceChildren(
      h(
        'p',
        {},
        'No word appears twice in this sequence. Try “Apple launched a new phone while I was eating an apple.”: both “Apple”s start from one static vector (as in word2vec), and only context can tell the company from the fruit.',
      ),
    );
    return;
  }
  const { C, width, embedding, x, out } = sequenceRows(r, b);
  const list = h('ul', {});
  for (const g of repeated) {
    const [a, c] = g;
    const same = (d: Float32Array, w: number) =>
      rowsEqual(d, w, a, c) ? 'identical' : 'different';
    list.append(
      h(
        'li',
        { 'data-pair': `${a},${c}` },
        `“${tokens[a]}” (${a + 1}) and “${tokens[c]}” (${c + 1}): word vectors ${same(embedding, C)}, inputs X ${same(x, C)}, outputs ${same(out, width)}.`,
      ),
    );
  }
  const allSame = repeated.every(([a, c]) => rowsEqual(out, width, a, c));
  const causal =
    r.model.maskSpec === 'causal' ||
    (typeof r.model.maskSpec === 'object' && r.model.maskSpec.causal);
  const why = allSame
    ? 'Self-attention on its own cannot tell where a word is: identical word vectors give identical queries, keys and values, and every query sees the same set of keys, hence identical outputs. Switch on positional encoding or the causal mask to see them differ.'
    : `${r.positional ? 'Positional encoding gives each position its own offset, so identical words get different queries, keys and values. ' : ''}${causal ? 'The causal mask lets each token see a different prefix of the sentence. ' : ''}So identical words end up with different outputs: the context now tells them apart.`;
  body.replaceChildren(list, h('p', {}, why));
}
