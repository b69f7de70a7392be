// The progress of a run on the page: status line, progress bar, the step that runs
// and the time elapsed, shown only for runs that take long enough to notice.
import { byId, setAttr } from './dom';

// A run is shown as in progress (status line, progress bar, step line, time
// elapsed) only once it has taken this long. Quicker runs go straight to their
// result: no "Computing…" flashes by, and the page lays out and paints nothing
// of its own while the workers compute, which on a machine with few cores takes
// CPU from them. That covers a token edit at T ≤ 64 with the toy and with GPT-2
// small (whose whole forward pass runs again); a delay this short still reads as
// a response to the keystroke, and anything longer shows its steps.
const kShowProgressAfter = 300; // ms
let stepTicker = 0;
let progressTimer = 0;

/** Takes down the progress display of the run before. */
export function stopProgress(): void {
  clearInterval(stepTicker);
  clearTimeout(progressTimer);
  setAttr(byId('status'), 'data-busy', '0');
  setAttr(byId('status'), 'data-checking', '0');
  setAttr(byId('steps'), 'data-running', '0');
  setAttr(byId('pipeline'), 'aria-busy', 'false');
}

/**
 * The steps of run `id`: "Step 2 of 3: transformer block…" (announced when a
 * step starts) and the time since the run started (updated four times a second,
 * not announced), shown once the run has taken kShowProgressAfter.
 */
export function startProgress(isCurrent: () => boolean, computing: string, onShown: () => void) {
  clearInterval(stepTicker);
  clearTimeout(progressTimer);
  const text = byId('step-text');
  const elapsed = byId('step-elapsed');
  const bar = byId<HTMLProgressElement>('progress');
  const started = performance.now();
  const seconds = () => `${((performance.now() - started) / 1000).toFixed(1)} s`;
  let shown = false;
  let engineDone = false;
  let current = { done: 0, total: 1, label: '' };
  const draw = () => {
    bar.max = current.total;
    bar.value = current.done;
    text.textContent = current.label
      ? `Step ${current.done + 1} of ${current.total}: ${current.label}…`
      : '';
    elapsed.textContent = seconds();
  };
  progressTimer = window.setTimeout(() => {
    if (!isCurrent()) return;
    shown = true;
    onShown();
    const status = byId('status');
    status.dataset.checking = '1'; // keeps the progress bar up until the check is done
    byId('steps').dataset.running = '1';
    if (!engineDone) {
      status.dataset.busy = '1';
      byId('pipeline').setAttribute('aria-busy', 'true');
      byId('status-text').textContent = computing;
    }
    draw();
    stepTicker = window.setInterval(() => {
      if (isCurrent()) elapsed.textContent = seconds();
    }, 250); // the page stays live: the engine works in a worker
  }, kShowProgressAfter);
  return {
    get total(): number {
      return current.total;
    },
    /** Step `done + 1` of `total` starts. */
    show(done: number, total: number, label: string): void {
      if (!isCurrent()) return;
      current = { done, total, label };
      if (shown) draw();
    },
    /** The engine's steps are done; the last step, `label`, starts. */
    computed(label: string): void {
      engineDone = true;
      current = { done: current.total - 1, total: current.total, label };
      setAttr(byId('status'), 'data-busy', '0');
      setAttr(byId('pipeline'), 'aria-busy', 'false');
      if (shown) draw();
    },
    /** Every step has ended: `summary` replaces the step line. */
    finish(summary: string, word = 'in'): void {
      if (!isCurrent()) return;
      stopProgress();
      text.textContent = `${summary} ${word} ${seconds()}.`;
      elapsed.textContent = '';
      bar.value = bar.max;
    },
  };
}
