// The numbers of "Train it yourself": the state of training, the latest report's
// losses, accuracy and speed, and the scrubber over the snapshots kept.
import { latest, scrubbed, snapshots, trainState } from '../../train/state';
import type { Task } from '../../train/tasks';

export function Numbers() {
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

export function StateLine({ task }: { task: Task | null }) {
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

export function Scrubber() {
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

