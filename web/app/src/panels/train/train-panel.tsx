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
  latest,
  learningRate,
  scrubbed,
  seed,
  selected,
  shape,
  shown,
  snapshots,
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
      {note && <span class="error" role="alert">{note}</span>}
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

function Numbers() {
  const p = latest.value;
  const state = trainState.value;
  const fmt = (v: number, digits = 3) => (Number.isFinite(v) ? v.toFixed(digits) : '–');
  return (
    <dl
      class="train-numbers"
      id="train-stats"
      data-state={state}
      data-step={p?.step ?? 0}
      data-answer-loss={p ? p.answerLoss : ''}
      data-seconds={p ? p.seconds : ''}
    >
      <div>
        <dt>step</dt>
        <dd>{p ? p.step : 0}</dd>
      </div>
      <div>
        <dt>training loss</dt>
        <dd>{p ? fmt(p.loss) : '–'}</dd>
      </div>
      <div>
        <dt>loss on the answers</dt>
        <dd>{p ? fmt(p.answerLoss) : '–'}</dd>
      </div>
      <div>
        <dt>answers right</dt>
        <dd>{p ? `${(100 * p.accuracy).toFixed(0)} %` : '–'}</dd>
      </div>
      <div>
        <dt>tokens / s</dt>
        <dd>{p ? Math.round(p.tokensPerSecond).toLocaleString('en') : '–'}</dd>
      </div>
      <div>
        <dt>time training</dt>
        <dd>{p ? `${p.seconds.toFixed(1)} s` : '–'}</dd>
      </div>
    </dl>
  );
}

function StateLine({ task }: { task: Task | null }) {
  const state = trainState.value;
  const p = latest.value;
  const text =
    state === 'idle'
      ? 'Not trained yet.'
      : state === 'starting'
        ? 'Making the model…'
        : state === 'running'
          ? 'Training…'
          : state === 'paused'
            ? 'Paused.'
            : `Stopped: ${p?.reason ?? 'done'}.`;
  // Announced on changes of state only: the numbers change too often to be read out.
  return (
    <p class="train-state" role="status" id="train-state">
      {text}
      {task && state === 'idle' ? ` ${task.length} tokens a sequence, ${task.batch} a step.` : ''}
    </p>
  );
}

function Scrubber() {
  const list = snapshots.value;
  const running = trainState.value === 'running';
  if (list.length < 2) return null;
  const index = scrubbed.value ?? list.length - 1;
  return (
    <label class="train-scrub">
      {`Snapshot at step ${list[index]!.step} (${index + 1} of ${list.length})`}
      <input
        id="train-scrub"
        type="range"
        min={0}
        max={list.length - 1}
        value={index}
        disabled={running}
        aria-valuetext={`step ${list[index]!.step}`}
        onInput={(e) => {
          const i = Number((e.currentTarget as HTMLInputElement).value);
          scrubbed.value = i === list.length - 1 ? null : i;
        }}
      />
    </label>
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
          onSelect={(l, h) => (selected.value = { layer: l, head: h })}
          size={narrow ? (config.heads > 3 ? 64 : 80) : 96}
        />
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
      <button type="button" id="train-export" onClick={() => void downloadModel(task)}>
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
