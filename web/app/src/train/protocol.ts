// Messages between the page and the training worker (worker.ts).
import type { TrainedHeads } from './head-scores';
import type { TaskId } from './tasks';

export interface TrainSetup {
  task: TaskId;
  /** The visitor's text, for the text task. */
  text: string;
  seed: number;
  lr: number;
}

export type TrainRequest =
  | { kind: 'start'; setup: TrainSetup; run: boolean }
  | { kind: 'pause' }
  | { kind: 'resume' }
  | { kind: 'step' }
  | { kind: 'lr'; lr: number }
  | { kind: 'save'; id: number };

/** What the worker reports every few steps: the numbers and the probe's attention. */
export interface TrainProgress {
  kind: 'progress';
  step: number;
  /** Mean loss of the training batches since the last report (all positions, nats). */
  loss: number;
  /** Loss on the positions with a known answer, on a fixed held-out batch. */
  answerLoss: number;
  /** Share of those answers the model gets right (its most likely token). */
  accuracy: number;
  tokensPerSecond: number;
  /** Seconds spent training so far (steps only). */
  seconds: number;
  lr: number;
  /** Per layer: the probe's attention weights (H, T, T). */
  attentions: Float32Array[];
  /** Per layer: the gradient of attn.c_attn.weight (C, 3C) from the last step. */
  gradients: Float32Array[];
  /** The heads' named patterns on the held-out batch (the content check once stopped). */
  heads: TrainedHeads;
  state: 'running' | 'paused' | 'done';
  /** Why training stopped, once it has. */
  reason?: string;
}

export type TrainReply =
  | TrainProgress
  | {
      kind: 'started';
      config: {
        layers: number;
        heads: number;
        dModel: number;
        vocabSize: number;
        contextLength: number;
      };
    }
  | { kind: 'saved'; id: number; bytes: Uint8Array }
  | { kind: 'error'; message: string };
