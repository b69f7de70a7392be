// "Train it yourself": choose a task, train a small GPT-2 on it in a worker and watch the
// loss fall and the heads form on a fixed probe; pause, step, reset, change the learning
// rate; scrub back through the snapshots; when training stops the model becomes the
// page's model, and it downloads as .safetensors.
import { useSignal, useSignalEffect } from '@preact/signals';
import { useEffect, useState } from 'preact/hooks';
import {
  pauseTraining,
  resumeTraining,
  setLearningRate,
  startTraining,
  stepTraining,
  whenDone,
} from '../../train/client';
import { downloadModel, showInPage } from '../../train/handoff';
import {
  activeTask,
  defaultLearningRate,
  handoff,
  history,
  learningRate,
  seed,
  selected,
  shape,
  shown,
  taskId,
  taskText,
  trainError,
  trainState,
  type Snapshot,
} from '../../train/state';
import { kTaskIds, kTaskLabels, taskOf, type Task, type TaskId } from '../../train/tasks';
import { GradientMap } from './gradient-map';
import { HeadMaps } from './head-maps';
import { LossCurve } from './loss-curve';
import { Numbers, Scrubber, StateLine } from './train-status';
import { TrainedHeadsList } from './trained-heads';

const reducedMotion = () => window.matchMedia('(prefers-reduced-motion: reduce)').matches;

/** The task the controls describe, or the reason it cannot be built (a text too short). */
function currentTask(): { task: Task | null; problem: string | null } {
  try {
    return { task: taskOf(taskId.value, taskText.value), problem: null };
  } catch (e) {
    return { task: null, problem: e instanceof Error ? e.message : String(e) };
  }
}

async function handOver(task: Task): Promise<void> {
  try {
    handoff.value = { ok: true, message: await showInPage(task) };
  } catch (e) {
    handoff.value = {
      ok: false,
      message: `The trained model could not be shown in the page: ${e instanceof Error ? e.message : String(e)}`,
    };
  }
}

function Setup({ busy, problem }: { busy: boolean; problem: string | null }) {
  return (
    <div class="train-setup">
      <label>
        Task{' '}
        <select
          id="train-task"
          value={taskId.value}
          disabled={busy}
          onChange={(e) => {
            const id = (e.currentTarget as HTMLSelectElement).value as TaskId;
            taskId.value = id;
            learningRate.value = defaultLearningRate(id);
          }}
        >
          {kTaskIds.map((id) => (
            <option key={id} value={id}>
              {kTaskLabels[id]}
            </option>
          ))}
        </select>
      </label>
      <label>
        Seed{' '}
        <input
          id="train-seed"
          type="number"
          min={0}
          max={4294967295}
          value={seed.value}
          disabled={busy}
          onChange={(e) => {
            const v = Math.floor(Number((e.currentTarget as HTMLInputElement).value));
            if (Number.isFinite(v) && v >= 0 && v < 2 ** 32) seed.value = v;
          }}
        />
      </label>
      {taskId.value === 'text' && (
        <label class="train-text">
          Your text (read as words and marks, each with the spaces before it)
          <textarea
            id="train-text"
            rows={3}
            value={taskText.value}
            disabled={busy}
            onInput={(e) => (taskText.value = (e.currentTarget as HTMLTextAreaElement).value)}
          />
        </label>
      )}
      {problem && (
        <p class="error" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

function LearningRate() {
  const [text, setText] = useState(String(learningRate.value));
  const [note, setNote] = useState<string | null>(null);
  useEffect(() => setText(String(learningRate.value)), [learningRate.value]);
  const apply = () => {
    const v = Number(text);
    if (!(v > 0 && v <= 1)) return setNote(`${text} is not a learning rate in (0, 1]`);
    setNote(null);
    setLearningRate(v);
  };
  return (
    <span class="train-lr">
      <label>
        Learning rate{' '}
        <input
          id="train-lr"
          type="number"
          min={0.00001}
          max={1}
          step="any"
          value={text}
          onInput={(e) => setText((e.currentTarget as HTMLInputElement).value)}
          onChange={apply}
          onKeyDown={(e) => e.key === 'Enter' && apply()}
        />
      </label>
      {note ? (
        <span class="error" role="alert">
          {note}
        </span>
      ) : (
        <span class="hint">(Enter: applied at once; AdamW’s moments start afresh)</span>
      )}
    </span>
  );
}

function Controls({ task }: { task: Task | null }) {
  const state = trainState.value;
  const has = shape.value !== null;
  const running = state === 'running' || state === 'starting';
  return (
    <div class="train-controls" role="group" aria-label="Training">
      <button
        type="button"
        id="train-start"
        disabled={!task || running}
        onClick={() => startTraining(true)}
      >
        {has ? 'Train again from the start' : 'Train'}
      </button>
      <button
        type="button"
        id="train-pause"
        disabled={!has || state === 'starting'}
        onClick={() => (state === 'running' ? pauseTraining() : resumeTraining())}
      >
        {state === 'running' ? 'Pause' : 'Resume'}
      </button>
      <button type="button" id="train-step" disabled={!has || running} onClick={stepTraining}>
        Step
      </button>
      <button
        type="button"
        id="train-reset"
        disabled={!task || state === 'starting'}
        onClick={() => startTraining(false)}
      >
        Reset
      </button>
      <LearningRate />
    </div>
  );
}

/** The snapshot to draw: live, or at most once a second with reduced motion. */
function useDrawn(): Snapshot | null {
  const drawn = useSignal<Snapshot | null>(null);
  useSignalEffect(() => {
    const s = shown();
    if (!reducedMotion() || trainState.value !== 'running' || !drawn.peek()) drawn.value = s;
  });
  useEffect(() => {
    if (!reducedMotion()) return;
    const timer = setInterval(() => (drawn.value = shown()), 1000);
    return () => clearInterval(timer);
  }, []);
  return drawn.value;
}

function Figures({ task }: { task: Task }) {
  const s = useDrawn();
  const config = shape.value;
  const narrow = window.innerWidth < 700;
  if (!s || !config) return null;
  const { layer, head } = selected.value;
  const T = task.probe.tokens.length;
  const probe = task.vocabulary.decode(task.probe.tokens);
  const select = (l: number, h: number) => (selected.value = { layer: l, head: h });
  return (
    <div class="train-figures">
      <div class="train-curve-box">
        <LossCurve points={history.value} target={task.target} mark={s.step} />
        <Scrubber />
      </div>
      <div class="train-heads-box">
        <h3>{`Every head on the probe “${probe}”`}</h3>
        <HeadMaps
          attentions={s.attentions}
          heads={config.heads}
          T={T}
          selected={selected.value}
          onSelect={select}
          size={narrow ? (config.heads > 3 ? 64 : 80) : 96}
          scores={s.heads}
        />
        <TrainedHeadsList heads={s.heads} H={config.heads} selected={selected.value} onSelect={select} />
        <GradientMap
          gradient={s.gradients[Math.min(layer, s.gradients.length - 1)]!}
          C={config.dModel}
          heads={config.heads}
          head={Math.min(head, config.heads - 1)}
          layer={layer}
          width={narrow ? 150 : 192}
        />
      </div>
    </div>
  );
}

function Outcome({ task }: { task: Task | null }) {
  const state = trainState.value;
  if (!task || !shape.value || state === 'running' || state === 'starting') return null;
  return (
    <div class="train-outcome">
      <button type="button" id="train-use" onClick={() => void handOver(task)}>
        Show it in the page
      </button>
      <button
        type="button"
        id="train-export"
        onClick={() =>
          downloadModel(task).catch((e: unknown) => {
            handoff.value = {
              ok: false,
              message: `The model could not be exported: ${e instanceof Error ? e.message : String(e)}`,
            };
          })
        }
      >
        Export .safetensors
      </button>
      {handoff.value && (
        <p class={handoff.value.ok ? 'note' : 'error'} id="train-handoff" role="status">
          {handoff.value.message}
        </p>
      )}
    </div>
  );
}

export function TrainPanel() {
  const { task, problem } = currentTask();
  const busy = trainState.value === 'running' || trainState.value === 'starting';
  useEffect(() => {
    // Training that reaches its end by itself hands the model to the page.
    whenDone(() => {
      const t = activeTask.value;
      if (t) void handOver(t);
    });
  }, []);
  return (
    <>
      <p class="hint">
        A real model, trained here: a GPT-2 of {task ? `${task.model.layers} layers × ${task.model.heads} heads, d_model ${task.model.dModel}` : 'a few layers'}, made by the engine
        with GPT-2’s initialisation and trained with AdamW in a worker on batches drawn from
        the seed. Each task has a known answer; the loss on the answers is measured on a
        held-out batch and training stops once it falls below the target.
      </p>
      <Setup busy={busy} problem={problem} />
      {task && <p class="train-about">{task.about}</p>}
      <Controls task={task} />
      <StateLine task={task} />
      {trainError.value && (
        <p class="error" role="alert" id="train-error">
          {trainError.value}
        </p>
      )}
      <Numbers />
      {activeTask.value && <Figures task={activeTask.value} />}
      <Outcome task={activeTask.value} />
    </>
  );
}
