// The tasks of "Train it yourself": each a way of drawing sequences whose answer is
// known, the positions where the answer can be predicted, the model that learns it and a
// fixed probe sequence on which the page watches its attention form. Everything is drawn
// from a seeded generator, so a seed gives the same batches on every machine.
import { mulberry32 } from '../prng';
import { symbolVocabulary, wordVocabulary, type Vocabulary } from './vocabulary';

export type TaskId = 'copy' | 'reverse' | 'sort' | 'previous' | 'text';

/** One training sequence and which of its next-token predictions have a known answer. */
export interface Sample {
  tokens: number[];
  /** answers[t]: the prediction made at position t (of token t + 1) is determined. */
  answers: boolean[];
}

export interface TaskModel {
  layers: number;
  heads: number;
  dModel: number;
}

export interface Task {
  id: TaskId;
  label: string;
  /** The pattern to discover, in a sentence. */
  about: string;
  vocabulary: Vocabulary;
  model: TaskModel;
  /** Tokens per sequence (T) and sequences per step (B). */
  length: number;
  batch: number;
  lr: number;
  /** Steps of linear warm-up of the learning rate (default none). */
  warmup?: number;
  /** AdamW's settings other than the rate (default: β2 0.98, decay 0.01, clip 1). */
  optimizer?: { beta2: number; weightDecay: number; clip: number };
  maxSteps: number;
  /** Training stops once the loss on the answers falls below this. */
  target: number;
  sample(rng: () => number): Sample;
  probe: Sample;
}

export const kTaskLabels: Record<TaskId, string> = {
  copy: 'Copy (induction)',
  reverse: 'Reverse',
  sort: 'Sort',
  previous: 'Previous token',
  text: 'Next word of your text',
};

const kLetters = 'ABCDEFGHIJKLMNOP'.split('');
const kProbeSeed = 20261126;

const pick = (rng: () => number, n: number) => Math.floor(rng() * n);

const range = (n: number) => Array.from({ length: n }, (_, i) => i);

function withProbe(task: Omit<Task, 'probe'>): Task {
  return { ...task, probe: task.sample(mulberry32(kProbeSeed)) };
}

/** The first k of the letters 0..count−1 in a random order: k different letters. */
function differentLetters(rng: () => number, count: number, k: number): number[] {
  const letters = range(count);
  for (let i = 0; i < k; i++) {
    const j = i + pick(rng, count - i);
    [letters[i], letters[j]] = [letters[j]!, letters[i]!];
  }
  return letters.slice(0, k);
}

/**
 * Different letters, then a run of n of them twice, n drawn anew for each sequence: the
 * repeat ends the sequence, so where it starts, and how far back each letter's first copy
 * sits, changes from one sequence to the next. No letter appears twice except in the repeat.
 */
function copyTask(): Task {
  const vocabulary = symbolVocabulary(kLetters);
  const T = 20;
  const shortest = 4;
  const longest = 10;
  return withProbe({
    id: 'copy',
    label: kTaskLabels.copy,
    about: `Different letters, then a run of ${shortest} to ${longest} letters twice. In the repeat, each next letter is the one that followed the same letter the first time. The run's length changes from sequence to sequence, so no fixed distance finds it: a head must look for the earlier copy of the current letter and read the letter after it: an induction head, which needs a head of layer 1 to work with, so it forms in layer 2.`,
    vocabulary,
    model: { layers: 2, heads: 2, dModel: 32 },
    length: T,
    batch: 16,
    lr: 3e-3,
    optimizer: { beta2: 0.99, weightDecay: 0, clip: 1 },
    maxSteps: 12000,
    target: 0.1,
    sample(rng) {
      const n = shortest + pick(rng, longest - shortest + 1);
      const letters = differentLetters(rng, kLetters.length, T - n);
      const run = letters.slice(T - 2 * n);
      // From the repeat's first letter on, each next letter is known.
      return {
        tokens: [...letters, ...run],
        answers: range(T).map((t) => t >= T - n && t < T - 1),
      };
    },
  });
}

/** n letters, a bar, the same letters backwards. */
function reverseTask(): Task {
  const vocabulary = symbolVocabulary([...kLetters.slice(0, 8), '|']);
  const n = 7;
  const bar = 8;
  return withProbe({
    id: 'reverse',
    label: kTaskLabels.reverse,
    about: `${n} letters, a bar, then the letters backwards: each answer looks at one fixed place before the bar, an anti-diagonal in the attention.`,
    vocabulary,
    model: { layers: 2, heads: 2, dModel: 32 },
    length: 2 * n + 1,
    batch: 16,
    lr: 3e-3,
    maxSteps: 6000,
    target: 0.1,
    sample(rng) {
      const letters = Array.from({ length: n }, () => pick(rng, 8));
      const tokens = [...letters, bar, ...letters.slice().reverse()];
      return { tokens, answers: range(2 * n + 1).map((t) => t >= n && t < 2 * n) };
    },
  });
}

/** n letters, a bar, the same letters in order (llm-viz's task). */
function sortTask(): Task {
  const vocabulary = symbolVocabulary([...kLetters.slice(0, 6), '|']);
  const n = 6;
  const bar = 6;
  return withProbe({
    id: 'sort',
    label: kTaskLabels.sort,
    about: `${n} letters out of A–F, a bar, then the same letters sorted: each answer is the smallest letter not yet written, so the heads look back at the letters still to come.`,
    vocabulary,
    model: { layers: 2, heads: 2, dModel: 32 },
    length: 2 * n + 1,
    batch: 16,
    lr: 3e-3,
    maxSteps: 8000,
    target: 0.1,
    sample(rng) {
      const letters = Array.from({ length: n }, () => pick(rng, 6));
      const tokens = [...letters, bar, ...letters.slice().sort((a, b) => a - b)];
      return { tokens, answers: range(2 * n + 1).map((t) => t >= n && t < 2 * n) };
    },
  });
}

/** New letters, each followed by the letter that came before it. */
function previousTask(): Task {
  const vocabulary = symbolVocabulary([...kLetters, '-']);
  const pairs = 9;
  const dash = kLetters.length;
  return withProbe({
    id: 'previous',
    label: kTaskLabels.previous,
    about:
      'A new random letter, then the new letter before it, again and again (a dash after the first). Each answer sits two places back: one head learns to look a fixed step behind.',
    vocabulary,
    model: { layers: 1, heads: 2, dModel: 32 },
    length: 2 * pairs,
    batch: 16,
    lr: 3e-3,
    maxSteps: 6000,
    target: 0.1,
    sample(rng) {
      const tokens: number[] = [];
      for (let i = 0; i < pairs; i++) {
        const letter = pick(rng, kLetters.length);
        tokens.push(letter, i === 0 ? dash : tokens[tokens.length - 2]!);
      }
      return { tokens, answers: range(2 * pairs).map((t) => t % 2 === 0) };
    },
  });
}

/** The visitor's own text, in words: the model learns to continue it. */
export function textTask(text: string): Task {
  const vocabulary = wordVocabulary(text);
  const ids = vocabulary.encode(text).ids;
  if (ids.length < 9)
    throw new Error(`Your text has ${ids.length} words and marks: type or paste at least 9.`);
  const T = Math.min(32, ids.length);
  const windows = ids.length - T + 1;
  return {
    id: 'text',
    label: kTaskLabels.text,
    about: `Windows of ${T} words from your text (${ids.length} words and marks, ${vocabulary.tokens.length - 1} different ones): each word is predicted from the words before it, so the heads learn which earlier words tell the next one.`,
    vocabulary,
    model: { layers: 2, heads: 4, dModel: 64 },
    length: T,
    batch: 8,
    lr: 3e-3,
    maxSteps: 3000,
    target: 0.1,
    sample(rng) {
      const start = pick(rng, windows);
      const tokens = ids.slice(start, start + T);
      return { tokens, answers: range(T).map((t) => t < T - 1) };
    },
    probe: { tokens: ids.slice(0, T), answers: range(T).map((t) => t < T - 1) },
  };
}

export const kTaskIds: TaskId[] = ['copy', 'reverse', 'sort', 'previous', 'text'];

/** The task of an id; the text task needs the visitor's text. */
export function taskOf(id: TaskId, text: string): Task {
  switch (id) {
    case 'copy':
      return copyTask();
    case 'reverse':
      return reverseTask();
    case 'sort':
      return sortTask();
    case 'previous':
      return previousTask();
    case 'text':
      return textTask(text);
  }
}

/** Batch number `step` of a run seeded with `seed`: B sequences, row-major, and their answers. */
export function batchAt(
  task: Task,
  seed: number,
  step: number,
): { tokens: Int32Array; answers: boolean[] } {
  const rng = mulberry32((seed * 0x9e3779b1 + step) >>> 0);
  const tokens = new Int32Array(task.batch * task.length);
  const answers: boolean[] = [];
  for (let b = 0; b < task.batch; b++) {
    const s = task.sample(rng);
    tokens.set(s.tokens, b * task.length);
    answers.push(...s.answers);
  }
  return { tokens, answers };
}
