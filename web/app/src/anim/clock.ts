// The time within the current stage, t ∈ [0, 1] (1: the stage complete). A stage
// change plays t from 0 to 1; the scrubber sets it; any new start interrupts the
// last. With prefers-reduced-motion, t goes straight to 1: the step-wise version.
import { signal } from '@preact/signals';

export const stageTime = signal(1);

let frame = 0;
const reduced = () => window.matchMedia('(prefers-reduced-motion: reduce)').matches;

/** Plays the current stage's build-up over `ms`. */
export function playStage(ms = 1200): void {
  cancelAnimationFrame(frame);
  if (reduced()) {
    stageTime.value = 1;
    return;
  }
  const start = performance.now();
  stageTime.value = 0;
  const tick = (now: number) => {
    const t = Math.min(1, (now - start) / ms);
    stageTime.value = t;
    if (t < 1) frame = requestAnimationFrame(tick);
  };
  frame = requestAnimationFrame(tick);
}

/** Shows the stage at time t (the scrubber), stopping any animation. */
export function scrubStage(t: number): void {
  cancelAnimationFrame(frame);
  stageTime.value = Math.max(0, Math.min(1, t));
}
