// The state of "Train it yourself": the setup the visitor chose, what the training
// worker last reported, the loss history and the snapshots to scrub back through.
// Written by client.ts (reports) and the panel's controls; not part of a link.
import { signal } from '@preact/signals';
import type { LoadedGpt2 } from '../gpt2/state';
import type { TrainedHeads } from './head-scores';
import type { TrainProgress } from './protocol';
import { taskOf, type Task, type TaskId } from './tasks';

// Genesis 1:1–5, King James Version (public domain).
export const kDefaultText =
  'In the beginning God created the heaven and the earth. And the earth was without form, and void; and darkness was upon the face of the deep. And the Spirit of God moved upon the face of the waters. And God said, Let there be light: and there was light. And God saw the light, that it was good: and God divided the light from the darkness. And God called the light Day, and the darkness he called Night. And the evening and the morning were the first day.';

export type TrainState = 'idle' | 'starting' | TrainProgress['state'];

/** One report kept for scrubbing back. */
export type Snapshot = Pick<
  TrainProgress,
  'step' | 'loss' | 'answerLoss' | 'accuracy' | 'attentions' | 'gradients' | 'heads'
>;

export interface ModelShape {
  layers: number;
  heads: number;
  dModel: number;
  vocabSize: number;
  contextLength: number;
}

export const taskId = signal<TaskId>('copy');
export const taskText = signal(kDefaultText);
export const seed = signal(1);
export const learningRate = signal(taskOf('copy', '').lr);

/** The task's own learning rate (the one it was tuned with). */
export const defaultLearningRate = (id: TaskId) => taskOf(id, kDefaultText).lr;

export const trainState = signal<TrainState>('idle');
/** The task of the model being trained (the controls may already show another). */
export const activeTask = signal<Task | null>(null);
export const shape = signal<ModelShape | null>(null);
export const latest = signal<TrainProgress | null>(null);
/** Every report's losses, for the curve. */
export const history = signal<{ step: number; loss: number; answerLoss: number }[]>([]);
export const snapshots = signal<Snapshot[]>([]);
/** The snapshot shown (an index into snapshots), or null for the latest report. */
export const scrubbed = signal<number | null>(null);
export const selected = signal({ layer: 0, head: 0 });
export const trainError = signal<string | null>(null);
/** What became of the trained model: shown in the page, or why it could not be. */
export const handoff = signal<{ ok: boolean; message: string } | null>(null);

/**
 * The named heads of the model handed to the page, with the loaded model they belong to
 * (the page's "Named heads" show them while that model is the page's).
 */
export const handedHeads = signal<{
  loaded: LoadedGpt2;
  heads: TrainedHeads;
  scoredOn: string;
} | null>(null);

const kMaxSnapshots = 160;

/** Keeps a report, halving the older snapshots when there are too many. */
export function keep(p: TrainProgress): void {
  const { step, loss, answerLoss, accuracy, attentions, gradients, heads } = p;
  let list = snapshots.value;
  if (list.length > 0 && list[list.length - 1]!.step === step) list = list.slice(0, -1);
  if (list.length >= kMaxSnapshots)
    list = list.filter((_, i) => i % 2 === 0 || i === list.length - 1);
  snapshots.value = [...list, { step, loss, answerLoss, accuracy, attentions, gradients, heads }];
  if (history.value.at(-1)?.step !== step)
    history.value = [...history.value, { step, loss, answerLoss }];
  latest.value = p;
}

/** The snapshot on screen: the scrubbed one, else the latest. */
export function shown(): Snapshot | null {
  const list = snapshots.value;
  const i = scrubbed.value;
  return i !== null && i < list.length ? list[i]! : (list.at(-1) ?? null);
}

export function clearRun(): void {
  latest.value = null;
  history.value = [];
  snapshots.value = [];
  scrubbed.value = null;
  trainError.value = null;
  handoff.value = null;
}
