// Runs the engine whenever the model inputs change and publishes the result (it
// owns `run` in the store). Marks for web/bench/site-bench.mjs: an update is the edit
// applied, the engine's compute and the redraw of the views; the reference check
// runs after, off the page.
import { batch, effect } from '@preact/signals';
import { runModel, startupReported } from './compute';
import { byId } from './dom';
import { gpt2Layer, loadedGpt2, waitingForKjv } from './gpt2/state';
import { gpt2Status, gpt2Tokens, runGpt2 } from './gpt2/run';
import { buildModel, type Model } from './model';
import { renderVerified } from './panels/verified';
import { startProgress, stopProgress } from './progress';
import { stagesFor } from './stages';
import { inputs, run, shownInputs, type ModelInputs } from './store';
import { defaultState } from './state';

// Every traced tensor of scores is B·H·T² floats and there are four of them (plus copies).
const kMaxScoreEntries = 16 * 512 * 512;
const kRunDelay = 120; // ms: the one debounce between a burst of input changes and its run

let runId = 0;
let runTimer = 0;
let editStart: number | null = null;
let onPainted: (id: number) => void = () => undefined;

/** True while a run is scheduled or in flight. */
export let runPending = false;

// The model depends only on the inputs: the view state is not part of it.
let modelCache: { inputs: ModelInputs; model: Model } | null = null;
export function currentModel(): Model {
  const now = inputs.value;
  if (modelCache?.inputs !== now)
    modelCache = { inputs: now, model: buildModel({ ...defaultState(), ...now }) };
  return modelCache.model;
}

function showError(text: string): void {
  const err = byId('error');
  err.hidden = false;
  err.textContent = text;
}

let atOnce = false;
/**
 * Input changes made by `change` run at once: one token edited, or typing that is
 * already debounced. Others wait kRunDelay, as number spinners fire in bursts.
 */
export function runAtOnce(change: () => void): void {
  atOnce = true;
  try {
    change();
  } finally {
    atOnce = false;
  }
}

/** Starts running on every change of the inputs; `painted(id)` is called once a result is on screen. */
export function startRunning(painted: (id: number) => void): void {
  onPainted = painted;
  effect(() => {
    void inputs.value;
    void loadedGpt2.value; // the visitor's GPT-2 instead of the toy, and its layer shown
    void gpt2Layer.value;
    void waitingForKjv.value;
    clearTimeout(runTimer);
    runPending = true;
    if (atOnce) {
      editStart = performance.now();
      void runNow();
    } else runTimer = window.setTimeout(runNow, kRunDelay);
  });
}

async function runNow(): Promise<void> {
  clearTimeout(runTimer);
  const id = ++runId;
  const started = editStart ?? performance.now();
  editStart = null;
  const s = inputs.value;
  const gpt2 = loadedGpt2.value;
  if (!run.value && waitingForKjv.value) {
    // The first screen waits for the model the page opens on rather than flashing the
    // toy's figure; the pipeline says what it is waiting for.
    runPending = false;
    return;
  }
  const model = gpt2
    ? { B: 1, H: gpt2.config.heads, T: gpt2Tokens(gpt2, s.text).tokens.length }
    : currentModel();
  const entries = model.B * model.H * model.T * model.T;
  const showInputs = () => (shownInputs.value = s);
  if (entries > kMaxScoreEntries) {
    showInputs();
    stopProgress();
    byId('step-text').textContent = '';
    byId('step-elapsed').textContent = '';
    runPending = false;
    showError(
      `This input needs ${entries.toLocaleString('en')} attention scores per step (batch × heads × tokens²). The page keeps every intermediate for inspection, so it is limited to ${kMaxScoreEntries.toLocaleString('en')} (for example 16 heads × 512 tokens). Use fewer heads, tokens or sentences.`,
    );
    return;
  }
  const status = byId('status-text');
  const isCurrent = () => id === runId;
  const steps = startProgress(
    isCurrent,
    `Computing ${model.B}×${model.T} tokens, ${model.H} head${model.H > 1 ? 's' : ''}…`,
    showInputs,
  );
  performance.mark('attnscope:update:start', { startTime: started });
  try {
    const progress = (done: number, total: number, step: string) => {
      if (isCurrent() && done < total) steps.show(done, total + 1, step); // the last step, the check, follows
    };
    const r = gpt2
      ? await runGpt2(gpt2, s.text, gpt2Layer.value, progress)
      : await runModel(currentModel(), s.positional, s.block, progress);
    if (!isCurrent()) return; // a newer run has started
    byId('error').hidden = true;
    const fully = r.attention.fullyMaskedCount
      ? ` ${r.attention.fullyMaskedCount} fully masked rows (no key left to look at; the engine returns zero weights for them).`
      : '';
    const startup =
      r.startupMillis > 0 ? ` (plus ${r.startupMillis.toFixed(0)} ms to start the engine)` : '';
    startupReported();
    const m = r.model;
    status.textContent = r.gpt2
      ? gpt2Status(r, startup)
      : `Computed by the engine in ${r.millis.toFixed(1)} ms${startup}: B=${m.B}, T=${m.T}, d_model=${m.C}, heads=${m.H}, d_k=${m.dK}, d_v=${m.dV}.${fully}`;
    steps.computed('checking against the double-precision reference');
    performance.mark('attnscope:compute:end');
    batch(() => {
      showInputs();
      run.value = { result: r, stages: stagesFor(r) };
    });
    // The views render in a microtask queued by the line above; this one follows it.
    await Promise.resolve();
    performance.mark('attnscope:update:end');
    performance.measure('attnscope:update', 'attnscope:update:start', 'attnscope:update:end');
    performance.measure('attnscope:compute', 'attnscope:update:start', 'attnscope:compute:end');
    performance.measure('attnscope:render', 'attnscope:compute:end', 'attnscope:update:end');
    runPending = false;
    requestAnimationFrame(() => {
      const frameStart = performance.now();
      setTimeout(() => {
        if (!isCurrent()) return;
        performance.measure('attnscope:painted', 'attnscope:update:start');
        performance.measure('attnscope:frame', { start: frameStart });
        renderVerified(r, isCurrent, (ok) =>
          steps.finish(
            ok
              ? `All ${steps.total} steps done`
              : `Step ${steps.total} of ${steps.total} failed (see Verified)`,
          ),
        );
        onPainted(id);
      }, 0);
    });
  } catch (e) {
    if (!isCurrent()) return;
    runPending = false;
    showInputs();
    steps.finish('Stopped: the engine rejected this input', 'after');
    showError(`The engine rejected this input: ${e instanceof Error ? e.message : String(e)}`);
    status.textContent = 'Error';
    onPainted(-1);
  }
}
