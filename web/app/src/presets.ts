// The tutorials' worked examples, reproduced exactly. Each preset sets the state and
// lists the tutorial's numbers next to where the engine's own result is read from.
import type { RunResult } from './compute';
import { defaultState, type AppState } from './state';
import {
  matrixEdits,
  inputEdits,
  weightRow,
  scoreRow,
  outputRow,
  softmaxPreset,
  k003Q,
  k003K,
  k003V,
  kEye3,
  kZero3,
} from './preset-inputs';
import { joinTokens, tokenize } from './tokenize';

const kLongText =
  "The animal didn't cross the street because it was too tired. It rained all day, so the river rose. ";

export interface PresetCheck {
  label: string;
  tutorial: string; // as printed in the tutorial
  digits: number; // decimals shown for the engine's value
  read: (r: RunResult) => number[];
}

export interface Preset {
  id: string;
  title: string;
  about: string;
  state: Partial<AppState>;
  checks: PresetCheck[];
}

export const kPresets: Preset[] = [
  {
    id: 'seed002',
    title: 'Three inputs of size 4 (unscaled)',
    about:
      'Input 1 = [1, 0, 1, 0], Input 2 = [0, 2, 0, 2], Input 3 = [1, 1, 1, 1] with the tutorial’s three 4×3 weight matrices and no scaling. ' +
      'Queries, keys, values and scores match the tutorial exactly. The tutorial rounds softmax([2, 4, 4]) to [0.0, 0.5, 0.5] and so gets Output 1 = [2.0, 7.0, 1.5]; unrounded, the weights are [0.063, 0.468, 0.468] and Output 1 is [1.937, 6.683, 1.595].',
    state: (() => {
      const edits: Record<string, number> = {};
      inputEdits(
        [
          [1, 0, 1, 0],
          [0, 2, 0, 2],
          [1, 1, 1, 1],
        ],
        edits,
      );
      matrixEdits(
        'wk',
        [
          [0, 0, 1],
          [1, 1, 0],
          [0, 1, 0],
          [1, 1, 0],
        ],
        edits,
      );
      matrixEdits(
        'wq',
        [
          [1, 0, 1],
          [1, 0, 0],
          [0, 0, 1],
          [0, 1, 1],
        ],
        edits,
      );
      matrixEdits(
        'wv',
        [
          [0, 2, 0],
          [0, 3, 0],
          [1, 0, 3],
          [1, 1, 0],
        ],
        edits,
      );
      return {
        text: 'x₁ x₂ x₃',
        dModel: 4,
        dK: 3,
        dV: 3,
        heads: 1,
        scaleMode: 'none',
        edits,
      } as Partial<AppState>;
    })(),
    checks: [
      { label: 'Scores of Input 1', tutorial: '[2, 4, 4]', digits: 4, read: (r) => scoreRow(r, 0) },
      {
        label: 'softmax of Input 1’s scores',
        tutorial: '[0.0, 0.5, 0.5] (rounded)',
        digits: 4,
        read: (r) => weightRow(r, 0),
      },
      {
        label: 'Output 1',
        tutorial: '[2.0, 7.0, 1.5] (from rounded weights)',
        digits: 4,
        read: (r) => outputRow(r, 0),
      },
      {
        label: 'Output 2',
        tutorial: 'left to the reader',
        digits: 4,
        read: (r) => outputRow(r, 1),
      },
      {
        label: 'Output 3',
        tutorial: 'left to the reader',
        digits: 4,
        read: (r) => outputRow(r, 2),
      },
    ],
  },
  {
    id: 'seed001',
    title: '2×2 identity example (scaled by √2)',
    about:
      'X = I, W_Q = W_K = I, W_V = [[1, 2], [3, 4]], scores divided by √d_k = √2. The tutorial rounds e^0.7071/(e^0.7071 + 1) to 0.6699; the exact value is 0.6697615…, and the output is [[1.6605, 2.6605], [2.3395, 3.3395]] rather than the rounded 1.6602 ….',
    state: (() => {
      const edits: Record<string, number> = {};
      inputEdits(
        [
          [1, 0],
          [0, 1],
        ],
        edits,
      );
      matrixEdits(
        'wq',
        [
          [1, 0],
          [0, 1],
        ],
        edits,
      );
      matrixEdits(
        'wk',
        [
          [1, 0],
          [0, 1],
        ],
        edits,
      );
      matrixEdits(
        'wv',
        [
          [1, 2],
          [3, 4],
        ],
        edits,
      );
      return {
        text: 'x₁ x₂',
        dModel: 2,
        dK: 2,
        dV: 2,
        heads: 1,
        scaleMode: 'sqrt',
        edits,
      } as Partial<AppState>;
    })(),
    checks: [
      {
        label: 'Attention weights, row 1',
        tutorial: '(0.6699, 0.3301)',
        digits: 7,
        read: (r) => weightRow(r, 0),
      },
      {
        label: 'Attention weights, row 2',
        tutorial: '(0.3301, 0.6699)',
        digits: 7,
        read: (r) => weightRow(r, 1),
      },
      {
        label: 'Output row 1',
        tutorial: '[1.6602, 2.6602]',
        digits: 7,
        read: (r) => outputRow(r, 0),
      },
      {
        label: 'Output row 2',
        tutorial: '[2.3398, 3.3398]',
        digits: 7,
        read: (r) => outputRow(r, 1),
      },
    ],
  },
  {
    id: 'seed003',
    title: '“The animal didn’t cross the street because it was too tired.”',
    about:
      'Static word vectors: each word’s vector comes from its lowercased text, so “The” and “the” get the same vector, like “Apple” in word2vec. Without positional encoding or a mask their rows of Q, K, V, weights and output are identical; turn on positional encoding or the causal mask and they differ. Self-attention turns these static vectors into contextual ones.',
    state: {
      text: "The animal didn't cross the street because it was too tired.",
      dModel: 16,
      dK: 8,
      dV: 8,
      heads: 2,
    },
    checks: [],
  },
  {
    id: 'seed003-table',
    title: 'The tutorial’s Q/K table for “it”',
    about:
      'X = [Q | K | V] from the tutorial’s tables (8 words), W_Q, W_K, W_V pick those columns, no scaling. “it”·“The” = 0.17, “it”·“animal” = 0.77, “it”·“tired” = 1.22 exactly as printed. The tutorial’s softmax weights (0.05, 0.60 …) are illustrative, not computed; the engine shows what softmax really gives for these scores: nearly uniform, with “tired” highest.',
    state: (() => {
      const edits: Record<string, number> = {};
      inputEdits(
        k003Q.map((q, i) => [...q, ...k003K[i], ...k003V[i]]),
        edits,
      );
      matrixEdits('wq', [...kEye3, ...kZero3, ...kZero3], edits);
      matrixEdits('wk', [...kZero3, ...kEye3, ...kZero3], edits);
      matrixEdits('wv', [...kZero3, ...kZero3, ...kEye3], edits);
      return {
        text: "The animal didn't cross street it was tired",
        dModel: 9,
        dK: 3,
        dV: 3,
        heads: 1,
        scaleMode: 'none',
        edits,
        sel: { seq: 0, head: 0, query: 5, key: 1 },
        stage: 2,
        inspect: 'scores',
      } as Partial<AppState>;
    })(),
    checks: [
      {
        label: '“it” · K of The, animal, …, tired',
        tutorial: 'The 0.17, animal 0.77, tired 1.22',
        digits: 4,
        read: (r) => scoreRow(r, 5),
      },
      {
        label: 'softmax of “it”’s scores',
        tutorial: '0.05, 0.60, 0.02, 0.03, 0.20, 0.00, 0.02, 0.08 (illustrative)',
        digits: 4,
        read: (r) => weightRow(r, 5),
      },
      {
        label: 'Output for “it”',
        tutorial: '[0.598, 0.518, 0.432] (from the illustrative weights)',
        digits: 4,
        read: (r) => outputRow(r, 5),
      },
    ],
  },
  {
    id: 'seed000-batch',
    title: 'Batch B=6, T=8, C=32, d=16 with a padding mask',
    about:
      'Six sentences of different lengths (one per line) padded to T = 8. The padding mask sets the scores of padding keys to −∞ before softmax, so padding gets exactly zero weight. See the Batch view.',
    state: {
      text: [
        'The cat sat on the mat.',
        'Dogs bark loudly at night.',
        'She reads books every evening before bed.',
        'Rain fell.',
        'Birds sing at dawn.',
        'Stars shine brightly tonight',
      ].join('\n'),
      dModel: 32,
      dK: 16,
      dV: 16,
      heads: 1,
      mask: 'padding',
      tab: 'batch',
    },
    checks: [],
  },
  {
    id: 'seed000-softmax1',
    title: 'softmax(logits): diffuse',
    about:
      'Scores equal to the logits [0.1, 0.4, −0.9, 0.02, 0.35, −0.62], unscaled. softmax spreads the weight: [0.18 0.25 0.07 0.17 0.24 0.09].',
    state: softmaxPreset(1),
    checks: [
      {
        label: 'softmax(logits)',
        tutorial: '[0.18 0.25 0.07 0.17 0.24 0.09]',
        digits: 2,
        read: (r) => weightRow(r, 0),
      },
    ],
  },
  {
    id: 'seed000-softmax100',
    title: 'softmax(logits × 100): one-hot',
    about:
      'The same logits multiplied by 100 (temperature 0.01): softmax becomes almost one-hot, [0 0.99 0 0 0.01 0]. This is why large dot products are divided by √d_k.',
    state: softmaxPreset(100),
    checks: [
      {
        label: 'softmax(logits × 100)',
        tutorial: '[0. 0.99 0. 0. 0.01 0.]',
        digits: 2,
        read: (r) => weightRow(r, 0),
      },
    ],
  },
  {
    id: 'long512',
    title: 'Long input: 512 tokens, 8 heads',
    about:
      'A long text to show that the page stays responsive: the engine runs in a worker, and views draw only what is visible.',
    state: {
      text: joinTokens(tokenize(kLongText.repeat(30)).slice(0, 512)),
      dModel: 64,
      dK: 8,
      dV: 8,
      heads: 8,
    },
    checks: [],
  },
];

export function applyPreset(id: string): AppState | null {
  const p = kPresets.find((x) => x.id === id);
  if (!p) return null;
  return { ...defaultState('toy'), ...p.state, preset: id, edits: { ...(p.state.edits ?? {}) } };
}
