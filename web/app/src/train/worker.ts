// Training off the main thread: a GPT-2 made by the engine (createModel), trained by its
// AdamW trainer on a task's seeded batches, in slices of about a tenth of a second so that
// pause, step and a new learning rate are answered between them. After each slice it
// reports the loss, the answers on a held-out batch and its heads' named patterns
// (head-scores.ts), the probe's attention in every layer and the gradient of every layer's
// attention projection. Once training stops or pauses, the report adds the content check
// of the induction score, which takes a forward pass per query.
import { createAttnScope, type AttnScope, type Model, type Trainer } from 'attnscope';
import {
  inductionWithCopiesChanged,
  scoreHeads,
  type TracedRun,
  type TrainedHeads,
} from './head-scores';
import type { TrainProgress, TrainReply, TrainRequest, TrainSetup } from './protocol';
import { batchAt, taskOf, type Task } from './tasks';

const kSliceMillis = 100;
const kOptimizer = { beta2: 0.98, weightDecay: 0.01, clip: 1 };
const kHeldOutSeed = 0x5bd1e995;

let engine: Promise<AttnScope> | null = null;
let model: Model | null = null;
let trainer: Trainer | null = null;
let task: Task | null = null;
let setup: TrainSetup | null = null;
let heldOut: { tokens: Int32Array; answers: boolean[] } | null = null;
let state: TrainProgress['state'] = 'paused';
let step = 0;
let stepLimit = 0;
let stopAtTarget = true;
let seconds = 0;
let lossSum = 0;
let lossCount = 0;
let lastLoss = NaN;
let scheduled: ReturnType<typeof setTimeout> | null = null;

const post = (reply: TrainReply, transfer: Transferable[] = []) =>
  self.postMessage(reply, { transfer });

function newTrainer(lr: number): Trainer {
  // A new trainer starts AdamW's moments afresh; the weights stay as they are.
  const { beta2, weightDecay, clip } = task!.optimizer ?? kOptimizer;
  return model!.trainer({ lr, betas: [0.9, beta2], weightDecay, clip, warmup: task!.warmup ?? 0 });
}

async function start(next: TrainSetup, run: boolean): Promise<void> {
  const e = await (engine ??= createAttnScope());
  const nextTask = taskOf(next.task, next.text); // throws a message for a text too short
  cancel();
  model?.dispose();
  model = null;
  task = nextTask;
  setup = next;
  model = e.createModel({
    ...task.model,
    vocabSize: task.vocabulary.tokens.length,
    contextLength: task.length,
    seed: next.seed,
  });
  trainer = newTrainer(next.lr);
  heldOut = batchAt(task, (next.seed ^ kHeldOutSeed) >>> 0, 0);
  step = 0;
  stepLimit = task.maxSteps;
  stopAtTarget = true;
  seconds = 0;
  lossSum = lossCount = 0;
  lastLoss = NaN;
  post({ kind: 'started', config: { ...model.config } });
  state = run ? 'running' : 'paused';
  report();
  if (run) schedule();
}

function trainStep(): void {
  const batch = batchAt(task!, setup!.seed, step);
  const begin = performance.now();
  const r = trainer!.step({ tokens: batch.tokens, shape: [task!.batch, task!.length] });
  seconds += (performance.now() - begin) / 1000;
  step++;
  lossSum += r.loss;
  lossCount++;
}

/** The held-out batch's sequences. */
function heldOutSequences(): number[][] {
  const { batch: B, length: T } = task!;
  return Array.from({ length: B }, (_, b) =>
    Array.from(heldOut!.tokens.subarray(b * T, (b + 1) * T)),
  );
}

/**
 * Loss and accuracy on the held-out batch's answers, from the engine's logits, and the
 * heads' scores from the same forward passes' attention.
 */
function evaluate(): { answerLoss: number; accuracy: number; heads: TrainedHeads } {
  const { length: T } = task!;
  const { vocabSize: V, layers, heads } = model!.config;
  let loss = 0,
    right = 0,
    count = 0;
  const runs: TracedRun[] = [];
  for (const [b, tokens] of heldOutSequences().entries()) {
    const f = model!.forward({ tokens, trace: true });
    runs.push({ tokens, attentions: f.attentions!.map((a) => a.data) });
    const logits = f.logits.data;
    for (let t = 0; t < T - 1; t++) {
      if (!heldOut!.answers[b * T + t]) continue;
      const row = logits.subarray(t * V, (t + 1) * V);
      let max = -Infinity,
        best = 0;
      for (let v = 0; v < V; v++) if (row[v]! > max) [max, best] = [row[v]!, v];
      let sum = 0;
      for (let v = 0; v < V; v++) sum += Math.exp(row[v]! - max);
      loss += Math.log(sum) + max - row[tokens[t + 1]!]!;
      if (best === tokens[t + 1]) right++;
      count++;
    }
  }
  return {
    answerLoss: loss / count,
    accuracy: right / count,
    heads: scoreHeads(runs, layers, heads),
  };
}

const attend = (tokens: number[]) =>
  model!.forward({ tokens, trace: true }).attentions!.map((a) => a.data);

function report(): void {
  const { answerLoss, accuracy, heads } = evaluate();
  if (lossCount > 0) lastLoss = lossSum / lossCount;
  lossSum = lossCount = 0;
  let reason: string | undefined;
  if (state === 'running' && stopAtTarget && answerLoss < task!.target) {
    state = 'done';
    reason = `the loss on the answers reached ${answerLoss.toFixed(3)}, below the target ${task!.target}`;
  } else if (state === 'running' && step >= stepLimit) {
    state = 'done';
    reason = `${step} steps, the most this task runs at a time`;
  }
  if (state !== 'running') {
    const { layers, heads: H, vocabSize } = model!.config;
    heads.inductionChanged = inductionWithCopiesChanged(
      attend,
      heldOutSequences(),
      layers,
      H,
      vocabSize,
    );
  }
  const attentions = model!
    .forward({ tokens: task!.probe.tokens, trace: true })
    .attentions!.map((a) => a.data);
  const gradients = Array.from(
    { length: model!.config.layers },
    (_, l) => trainer!.gradient(`h.${l}.attn.c_attn.weight`).data,
  );
  const progress: TrainProgress = {
    kind: 'progress',
    step,
    loss: lastLoss,
    answerLoss,
    accuracy,
    tokensPerSecond: seconds > 0 ? (step * task!.batch * task!.length) / seconds : 0,
    seconds,
    lr: setup!.lr,
    attentions,
    gradients,
    heads,
    state,
    reason,
  };
  post(
    progress,
    [...attentions, ...gradients].map((a) => a.buffer),
  );
}

function slice(): void {
  scheduled = null;
  if (state !== 'running') return;
  try {
    const until = performance.now() + kSliceMillis;
    do trainStep();
    while (performance.now() < until && step < stepLimit);
    report();
  } catch (err) {
    fail(err);
    return;
  }
  if (state === 'running') schedule();
}

function fail(err: unknown): void {
  cancel();
  if (state === 'running') state = 'paused';
  post({ kind: 'error', message: err instanceof Error ? err.message : String(err) });
}

function schedule(): void {
  scheduled ??= setTimeout(slice, 0);
}

function cancel(): void {
  if (scheduled !== null) clearTimeout(scheduled);
  scheduled = null;
}

function handle(request: TrainRequest): void | Promise<void> {
  if (request.kind === 'start') return start(request.setup, request.run);
  if (!model || !trainer || !task || !setup) throw new Error('no model is being trained');
  switch (request.kind) {
    case 'pause':
      if (state === 'running') state = 'paused';
      cancel();
      return report();
    case 'resume':
      if (state === 'done') {
        // Going on past the target or the step budget: the next budget starts now.
        stopAtTarget = false;
        stepLimit = step + task.maxSteps;
      }
      state = 'running';
      return schedule();
    case 'step':
      if (state === 'running') return;
      state = 'paused';
      trainStep();
      return report();
    case 'lr':
      setup = { ...setup, lr: request.lr };
      trainer = newTrainer(request.lr);
      if (state !== 'running') report();
      return;
    case 'save':
      return post({ kind: 'saved', id: request.id, bytes: model.save() });
  }
}

self.onmessage = async (e: MessageEvent<TrainRequest>) => {
  try {
    await handle(e.data);
  } catch (err) {
    fail(err);
  }
};
