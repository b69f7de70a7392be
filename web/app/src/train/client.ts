// The page's side of the training worker: sends the controls' requests and turns its
// reports into the state of state.ts. When training stops, the trained model becomes
// the page's model (handoff.ts).
import { batch } from '@preact/signals';
import type { TrainReply, TrainRequest } from './protocol';
import { taskOf } from './tasks';
import {
  activeTask,
  clearRun,
  keep,
  learningRate,
  seed,
  shape,
  taskId,
  taskText,
  trainError,
  trainState,
} from './state';

let worker: Worker | null = null;
let nextSave = 0;
const saves = new Map<
  number,
  { resolve: (bytes: Uint8Array) => void; reject: (e: Error) => void }
>();
let onDone: (() => void) | null = null;

function send(request: TrainRequest): void {
  if (!worker) {
    worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (e: MessageEvent<TrainReply>) => receive(e.data);
  }
  worker.postMessage(request);
}

function receive(reply: TrainReply): void {
  if (reply.kind === 'started') {
    shape.value = reply.config;
  } else if (reply.kind === 'progress') {
    const wasRunning = trainState.value === 'running';
    batch(() => {
      keep(reply);
      trainState.value = reply.state;
    });
    if (wasRunning && reply.state === 'done') onDone?.();
  } else if (reply.kind === 'saved') {
    saves.get(reply.id)?.resolve(reply.bytes);
    saves.delete(reply.id);
  } else {
    for (const s of saves.values()) s.reject(new Error(reply.message));
    saves.clear();
    batch(() => {
      trainError.value = reply.message;
      if (trainState.value === 'running' || trainState.value === 'starting')
        trainState.value = latest() ? 'paused' : 'idle';
    });
  }
}

const latest = () => shape.value !== null;

/** Called once each time training reaches its end by itself. */
export function whenDone(f: () => void): void {
  onDone = f;
}

/** A fresh model for the chosen task and seed; `run` starts training it at once. */
export function startTraining(run: boolean): void {
  const task = taskOf(taskId.value, taskText.value); // the panel offers only tasks that build
  batch(() => {
    clearRun();
    activeTask.value = task;
    shape.value = null;
    trainState.value = 'starting';
  });
  send({
    kind: 'start',
    setup: { task: taskId.value, text: taskText.value, seed: seed.value, lr: learningRate.value },
    run,
  });
}

export const pauseTraining = () => send({ kind: 'pause' });
export function resumeTraining(): void {
  trainState.value = 'running';
  send({ kind: 'resume' });
}
export const stepTraining = () => send({ kind: 'step' });
export function setLearningRate(lr: number): void {
  learningRate.value = lr;
  if (shape.value) send({ kind: 'lr', lr });
}

/** The trained model as .safetensors bytes (the engine's model.save()). */
export function savedModel(): Promise<Uint8Array> {
  const id = ++nextSave;
  return new Promise((resolve, reject) => {
    saves.set(id, { resolve, reject });
    send({ kind: 'save', id });
  });
}
