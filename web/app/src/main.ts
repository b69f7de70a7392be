// Wires the page: state ⇄ controls, state → engine (worker) → result → views.
import './styles.css';
import { engineVersion, runModel, type RunResult } from './compute';
import { announce, byId, clear, h, setAttr, setChecked, setText, setValue } from './dom';
import { canvasToPng, download, matrixCsv, safeJson, stateJsonBlob, svgText, svgToPng } from './export';
import { buildModel as buildModelUncached, kPad, type Model } from './model';
import { Player } from './player';
import { kPresets, applyPreset } from './presets';
import { stagesFor, type Stage } from './stages';
import { clampNote, defaultState, sanitizeState, type AppState, type MatrixName, type ViewTab } from './state';
import { computedPart } from './tokenize';
import { textLimitNote } from './text-limits';
import { decodeLink, linkState } from './url-state';
import { barsSvg } from './views/bars';
import { forgetTheme, heatmapElement, heatmapSvg } from './views/heatmap';
import { linesSvg } from './views/lines';
import { composeSvg } from './views/compose';
import { indexLabels, type MatrixView } from './views/matrix';
import { renderChecks, renderNotes } from './panels/notes';
import { renderVerified } from './panels/verified';
import { dataTable } from './views/table';
import { kWalkSteps, walkthrough } from './walkthrough';
import { kMaxWeightsChars, parseWeightsJson } from './weights-import';

// Every traced tensor of scores is B·H·T² floats and there are four of them (plus copies).
const kMaxScoreEntries = 16 * 512 * 512;

let state: AppState = defaultState();
let result: RunResult | null = null;
let stages: Stage[] = [];
let engineName = '';
let runId = 0;
let editCell: [number, number] = [0, 0];
let inspected: { matrix: MatrixView; i: number; j: number } | null = null;

// The model depends only on the inputs, not on what is selected or shown.
let modelCache: { key: string; model: Model } | null = null;
function buildModel(s: AppState): Model {
  const { sel: _sel, stage: _stage, tab: _tab, preset: _preset, ...inputs } = s;
  const key = JSON.stringify(inputs);
  if (modelCache?.key !== key) modelCache = { key, model: buildModelUncached(s) };
  return modelCache.model;
}

// Widths of the containers the views are sized to, kept by a ResizeObserver: reading
// clientWidth while drawing forces a synchronous layout of the freshly changed page.
const widths = new Map<string, number>();
function observeWidths(...ids: string[]): void {
  const ro = new ResizeObserver((entries) => {
    for (const e of entries) widths.set(e.target.id, (e.target as HTMLElement).clientWidth);
  });
  for (const id of ids) ro.observe(byId(id));
}
function widthOf(id: string): number {
  let w = widths.get(id);
  if (w === undefined) widths.set(id, (w = byId(id).clientWidth)); // before the first observation
  return w;
}

// Canvases of the previous update, redrawn in place by the next one (by slot: view and index).
const canvases = new Map<string, HTMLCanvasElement>();
function canvasSlot(slot: string, make: (reuse: HTMLCanvasElement | null) => HTMLCanvasElement): HTMLCanvasElement {
  const c = make(canvases.get(slot) ?? null);
  canvases.set(slot, c);
  return c;
}

// ---------- state changes ----------

/**
 * `runDelay` 0 runs at once: for changes already debounced (typing) or made in one
 * step (a token edited); controls that fire in bursts (number spinners) wait kRunDelay.
 */
function update(patch: Partial<AppState>, recompute = true, runDelay = kRunDelay): void {
  // The visitor's own text is kept whole: only what is computed is limited.
  const text = typeof patch.text === 'string' ? patch.text : state.text;
  state = { ...sanitizeState({ ...state, ...patch }), text };
  if (recompute && runDelay <= 0) {
    // The run goes to the worker first and the controls are redrawn while it
    // computes. Its update measure starts here, with the edit.
    editStart = performance.now();
    scheduleRun(0);
    syncControls(true);
  } else if (recompute) {
    syncControls();
    scheduleRun(runDelay);
  } else {
    renderResult();
  }
  scheduleUrl();
}

let urlTimer = 0;
/**
 * Writes the state to the address bar once things are quiet: compressing the state
 * and history.replaceState take milliseconds, so they wait while a run is pending
 * and the run writes the address after its views are painted.
 */
function scheduleUrl(): void {
  clearTimeout(urlTimer);
  urlTimer = window.setTimeout(() => {
    if (!runPending) void writeUrl(); // else the run writes it once drawn
  }, 150);
}

async function writeUrl(): Promise<void> {
  const link = await linkState(state);
  history.replaceState(null, '', link.hash ?? `${location.pathname}${location.search}`);
  const note = byId('link-note');
  note.textContent = link.note;
  note.hidden = !link.note;
}

const kRunDelay = 120; // ms: the one debounce between an input and its run
let runTimer = 0;
let runPending = false; // a run is scheduled or in flight
let editStart: number | null = null; // when the edit that starts the next run was applied
function scheduleRun(delay = kRunDelay): void {
  clearTimeout(runTimer);
  runPending = true;
  if (delay <= 0) void run();
  else runTimer = window.setTimeout(run, delay);
}

/**
 * After the next paint: for work the visitor does not wait for (the check, the
 * address bar). `work` gets the time the frame started (its animation-frame
 * callbacks), so that what the frame itself cost (style, layout, paint) is known.
 */
function afterPaint(work: (frameStart: number) => unknown): void {
  requestAnimationFrame(() => {
    const frameStart = performance.now();
    setTimeout(() => work(frameStart), 0);
  });
}

async function run(): Promise<void> {
  clearTimeout(runTimer);
  const id = ++runId;
  const started = editStart ?? performance.now();
  editStart = null;
  const model = buildModel(state);
  const entries = model.B * model.H * model.T * model.T;
  if (entries > kMaxScoreEntries) {
    const err = byId('error');
    err.hidden = false;
    stopProgress();
    redrawStaleControls();
    byId('step-text').textContent = '';
    byId('step-elapsed').textContent = '';
    runPending = false;
    err.textContent = `This input needs ${entries.toLocaleString('en')} attention scores per step (batch × heads × tokens²). The page keeps every intermediate for inspection, so it is limited to ${kMaxScoreEntries.toLocaleString('en')} (for example 16 heads × 512 tokens). Use fewer heads, tokens or sentences.`;
    return;
  }
  const status = byId('status-text');
  // The steps: the engine calls, then the double-precision check of their result.
  const steps = startProgress(id, `Computing ${model.B}×${model.T} tokens, ${model.H} head${model.H > 1 ? 's' : ''}…`);
  // Marks for web/bench/site-bench.mjs: an update is the edit applied, the
  // engine's compute and the redraw of the views (the reference check runs
  // after, off the page).
  performance.mark('attnscope:update:start', { startTime: started });
  try {
    const r = await runModel(model, state.positional, state.block, (done, total, step) => {
      if (id === runId && done < total) steps.show(done, total + 1, step); // the last step, the check, follows
    });
    if (id !== runId) return; // a newer run has started
    result = r;
    stages = stagesFor(r);
    byId('error').hidden = true;
    const fully = r.attention.fullyMaskedCount ? ` ${r.attention.fullyMaskedCount} fully masked rows (no key left to look at; the engine returns zero weights for them).` : '';
    status.textContent = `Computed by the engine in ${r.millis.toFixed(1)} ms: B=${model.B}, T=${model.T}, d_model=${model.C}, heads=${model.H}, d_k=${model.dK}, d_v=${model.dV}.${fully}`;
    steps.computed('checking against the double-precision reference');
    performance.mark('attnscope:compute:end');
    redrawStaleControls();
    renderResult();
    performance.mark('attnscope:update:end');
    performance.measure('attnscope:update', 'attnscope:update:start', 'attnscope:update:end');
    performance.measure('attnscope:compute', 'attnscope:update:start', 'attnscope:compute:end');
    performance.measure('attnscope:render', 'attnscope:compute:end', 'attnscope:update:end');
    runPending = false;
    // The double-precision check and the address bar wait until the views are on
    // screen; the page counts as ready once its link (and link note) is written too.
    afterPaint(async (frameStart) => {
      if (id !== runId) return;
      // The frame that shows the result has been laid out and painted: from the
      // start of the run (including the wait for that frame), and the frame alone.
      performance.measure('attnscope:painted', 'attnscope:update:start');
      performance.measure('attnscope:frame', { start: frameStart });
      renderVerified(r, () => id === runId, (ok) => steps.finish(ok ? `All ${steps.total} steps done` : `Step ${steps.total} of ${steps.total} failed (see Verified)`));
      clearTimeout(urlTimer);
      await writeUrl().catch(() => undefined);
      if (id === runId) document.body.dataset.ready = String(id);
    });
  } catch (e) {
    if (id !== runId) return;
    runPending = false;
    scheduleUrl();
    redrawStaleControls();
    steps.finish('Stopped: the engine rejected this input', 'after');
    const err = byId('error');
    err.hidden = false;
    err.textContent = `The engine rejected this input: ${e instanceof Error ? e.message : String(e)}`;
    status.textContent = 'Error';
  }
}

// ---------- progress of a run ----------

// A run is shown as in progress (status line, progress bar, step line, time
// elapsed) only once it has taken this long. Quicker runs, such as a token edit
// at T ≤ 64, go straight to their result: no "Computing…" flashes by, and the
// page draws no frame of its own for it while the worker computes, so the
// result is drawn sooner.
const kShowProgressAfter = 100; // ms
let stepTicker = 0;
let progressTimer = 0;

/** Takes down the progress display of the run before. */
function stopProgress(): void {
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
function startProgress(id: number, computing: string) {
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
    text.textContent = current.label ? `Step ${current.done + 1} of ${current.total}: ${current.label}…` : '';
    elapsed.textContent = seconds();
  };
  progressTimer = window.setTimeout(() => {
    if (id !== runId) return;
    shown = true;
    redrawStaleControls();
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
      if (id === runId) elapsed.textContent = seconds();
    }, 250); // the page stays live: the engine works in a worker
  }, kShowProgressAfter);
  return {
    get total(): number {
      return current.total;
    },
    /** Step `done + 1` of `total` starts. */
    show(done: number, total: number, label: string): void {
      if (id !== runId) return;
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
      if (id !== runId) return;
      stopProgress();
      text.textContent = `${summary} ${word} ${seconds()}.`;
      elapsed.textContent = '';
      bar.value = bar.max;
    },
  };
}

// ---------- controls ----------

const numberFields = ['dModel', 'dK', 'dV', 'heads', 'seed', 'hidden', 'temperature'] as const;
type NumberField = (typeof numberFields)[number];

/** Says next to a field when the value asked for was out of range and which value is used. */
function showClamp(f: NumberField, asked: unknown): void {
  const note = byId(`${f}-note`);
  const text = clampNote(f, asked, state[f]);
  setText(note, text);
  note.hidden = !text;
}

// The chips and the matrix editor after an edit that runs at once are drawn with
// its result, or when its progress shows if it takes longer: drawn at once, they
// cost a frame of their own, which the result, back from the worker meanwhile,
// then waits for.
let controlsStale = false;
function redrawStaleControls(): void {
  if (!controlsStale) return;
  controlsStale = false;
  renderChips();
  renderEditor();
}

/** Sets the controls from the state; `later`: the chips and the editor wait for redrawStaleControls. */
function syncControls(later = false): void {
  setValue(byId<HTMLTextAreaElement>('text'), state.text);
  for (const f of numberFields) setValue(byId<HTMLInputElement>(f), String(state[f]));
  setValue(byId<HTMLSelectElement>('scaleMode'), state.scaleMode);
  setValue(byId<HTMLSelectElement>('mask'), state.mask);
  setValue(byId<HTMLSelectElement>('activation'), state.activation);
  setChecked(byId<HTMLInputElement>('positional'), state.positional);
  setChecked(byId<HTMLInputElement>('block'), state.block);
  const temperature = byId('temperature-label');
  if (temperature.hidden !== (state.scaleMode !== 'temperature')) temperature.hidden = state.scaleMode !== 'temperature';
  setValue(byId<HTMLSelectElement>('preset'), state.preset ?? '');
  const preset = kPresets.find((p) => p.id === state.preset);
  setText(byId('preset-about'), preset?.about ?? '');
  controlsStale = true;
  if (!later) redrawStaleControls();
}

let chipsText = '';
function renderChips(): void {
  if (chipsText === state.text) return;
  chipsText = state.text;
  const box = byId('chips');
  const part = computedPart(state.text);
  const lines = part.sentences.map((s) => s.tokens); // chips for the computed tokens only
  // An edit changes a token or two: the chips already there are updated in place and
  // only missing ones are created, so the row is not rebuilt and laid out from scratch.
  const old = box.children;
  let at = 0;
  const place = (tag: 'span' | 'button', cls: string, text: string, attrs: Record<string, string>) => {
    let el = old[at] as HTMLElement | undefined;
    if (el?.tagName === 'INPUT') { // the editor of a chip just applied: its chip comes back below
      el.remove();
      el = old[at] as HTMLElement | undefined;
    }
    if (!el || el.tagName.toLowerCase() !== tag || el.className !== cls) {
      const made = h(tag, { class: cls, ...(tag === 'button' ? { type: 'button' } : {}) });
      if (el) box.insertBefore(made, el);
      else box.append(made);
      el = made;
    }
    setText(el, text);
    for (const [k, v] of Object.entries(attrs)) if (el.getAttribute(k) !== v) el.setAttribute(k, v);
    at++;
  };
  let count = 0;
  lines.forEach((tokens, line) => {
    if (lines.length > 1) place('span', 'chip-line', `sentence ${line + 1}`, {});
    tokens.forEach((tok, t) => {
      // Buttons are cheap to lay out even by the thousand; an input appears only while editing.
      place('button', 'chip', tok, { 'aria-label': `token ${t + 1} of sentence ${line + 1}: ${tok}. Press to edit.`, 'data-line': String(line), 'data-index': String(t) });
      count++;
    });
  });
  while (old.length > at) old[old.length - 1].remove();
  setText(byId('token-count'), `${count} tokens${lines.length > 1 ? ` in ${lines.length} sentences (padded to the longest)` : ''}. Edit a token below; empty it to remove it.${textLimitNote(part)}`);
}

function editChip(chip: HTMLElement): void {
  const line = Number(chip.dataset.line);
  const index = Number(chip.dataset.index);
  const input = h('input', { class: 'chip editing', value: chip.textContent ?? '', 'aria-label': `edit token ${index + 1}; Enter to apply, Escape to cancel`, spellcheck: 'false' });
  let done = false;
  const finish = (apply: boolean) => {
    if (done) return;
    done = true;
    if (!apply || input.value === chip.textContent) {
      input.replaceWith(chip);
      chip.focus();
      return;
    }
    // Replace just this token's characters: the rest of the text stays as typed.
    const sentence = computedPart(state.text).sentences[line];
    if (!sentence || index >= sentence.tokens.length) return;
    const before = state.text.slice(0, sentence.start[index]);
    let after = state.text.slice(sentence.end[index]);
    if (input.value === '') after = after.replace(/^[ \t]+/, ''); // a removed word takes its space with it
    input.replaceWith(chip); // the chips are updated in place: this one gets its new text
    update({ text: before + input.value + after, preset: null }, true, 0); // one edit: no need to wait for more
  };
  input.addEventListener('keydown', (e) => {
    if (e.key === 'Enter') finish(true);
    else if (e.key === 'Escape') finish(false);
  });
  input.addEventListener('blur', () => finish(true));
  chip.replaceWith(input);
  input.focus();
  input.select();
}

function bindControls(): void {
  const sel = byId<HTMLSelectElement>('preset');
  for (const p of kPresets) sel.append(h('option', { value: p.id }, p.title));
  sel.addEventListener('change', () => {
    const next = sel.value ? applyPreset(sel.value) : null;
    if (next) {
      state = next;
      for (const f of numberFields) showClamp(f, state[f]); // a preset's sizes are in range: clear the notes
      syncControls();
      scheduleRun();
      scheduleUrl();
    } else update({ preset: null });
  });
  let textTimer = 0;
  byId<HTMLTextAreaElement>('text').addEventListener('input', (e) => {
    clearTimeout(textTimer);
    const value = (e.target as HTMLTextAreaElement).value;
    // Typing is debounced here once; the run then starts at once (no second wait).
    textTimer = window.setTimeout(() => update({ text: value, preset: null }, true, 0), kRunDelay);
  });
  byId('chips').addEventListener('click', (e) => {
    const chip = (e.target as HTMLElement).closest<HTMLElement>('button.chip');
    if (chip) editChip(chip);
  });
  for (const f of numberFields) {
    const input = byId<HTMLInputElement>(f);
    const note = h('span', { id: `${f}-note`, class: 'field-note', role: 'status', hidden: true });
    (input.closest('label') ?? input).after(note);
    input.setAttribute('aria-describedby', note.id);
    input.addEventListener('change', () => {
      // An emptied field reads as '' (Number('') is 0): keep the current value and say so.
      const v = input.value.trim() === '' ? Number.NaN : Number(input.value);
      if (Number.isFinite(v)) update({ [f]: v } as Partial<AppState>);
      else input.value = String(state[f]);
      showClamp(f, v);
    });
  }
  for (const f of ['scaleMode', 'mask', 'activation'] as const)
    byId<HTMLSelectElement>(f).addEventListener('change', (e) => update({ [f]: (e.target as HTMLSelectElement).value } as Partial<AppState>));
  for (const f of ['positional', 'block'] as const)
    byId<HTMLInputElement>(f).addEventListener('change', (e) => update({ [f]: (e.target as HTMLInputElement).checked } as Partial<AppState>));
  byId('reseed').addEventListener('click', () => update({ seed: (state.seed * 1664525 + 1013904223) >>> 0 }));
  byId('clear-edits').addEventListener('click', () => update({ edits: {}, preset: null }));
  byId('edit-matrix').addEventListener('change', () => { editCell = [0, 0]; renderEditor(); });
  byId('export-weights').addEventListener('click', exportWeights);
  byId<HTMLInputElement>('import-weights').addEventListener('change', importWeights);
  byId('sel-seq').addEventListener('change', (e) => update({ sel: { ...state.sel, seq: Number((e.target as HTMLSelectElement).value) } }, false));
  byId('sel-head').addEventListener('change', (e) => update({ sel: { ...state.sel, head: Number((e.target as HTMLSelectElement).value) } }, false));
  byId('walk-query').addEventListener('change', (e) => {
    const q = Number((e.target as HTMLSelectElement).value);
    walkPlayer.go(q * kWalkSteps.length + kWalkSteps.length - 1);
  });
  const tabs = Array.from(document.querySelectorAll<HTMLButtonElement>('[role=tab]'));
  tabs.forEach((tab, k) => {
    tab.addEventListener('click', () => update({ tab: tab.dataset.tab as ViewTab }, false));
    tab.addEventListener('keydown', (e) => {
      const d = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
      if (!d) return;
      const next = tabs[(k + d + tabs.length) % tabs.length];
      next.focus();
      next.click();
    });
  });
  byId('copy-link').addEventListener('click', async () => {
    const link = await linkState(state);
    const url = `${location.origin}${location.pathname}${link.hash ?? ''}`;
    try {
      await navigator.clipboard.writeText(url);
      announce(`Link copied.${link.note ? ` ${link.note}` : ''}`);
    } catch {
      announce('Copy the address bar to share this view.');
    }
  });
  byId('export-json').addEventListener('click', async () => {
    announce('Preparing the JSON export…');
    try {
      download(await stateJsonBlob(state, result, engineName), 'attnscope-state.json');
      announce('JSON export ready.');
    } catch (e) {
      const err = byId('error');
      err.hidden = false;
      err.textContent = `Export failed: ${e instanceof Error ? e.message : String(e)}`;
    }
  });
}

// ---------- weights import/export and the editor ----------

function currentMatrix(name: MatrixName, model: Model): { rows: number; cols: number; data: Float32Array; b: number } {
  if (name === 'x') {
    const b = Math.min(state.sel.seq, model.B - 1);
    return { rows: model.T, cols: model.C, data: model.embeddings.subarray(b * model.T * model.C, (b + 1) * model.T * model.C), b };
  }
  return { ...model.weights[name], b: 0 };
}

function exportWeights(): void {
  const model = buildModel(state);
  const out: Record<string, unknown> = { format: 'attnscope-weights', dModel: state.dModel, dK: state.dK, dV: state.dV, heads: state.heads, hidden: state.hidden, seed: state.seed };
  for (const [name, w] of Object.entries(model.weights)) out[name] = Array.from({ length: w.rows }, (_, i) => Array.from(w.data.subarray(i * w.cols, (i + 1) * w.cols)));
  download(new Blob([safeJson(out)], { type: 'application/json' }), 'attnscope-weights.json');
}

async function importWeights(e: Event): Promise<void> {
  const input = e.target as HTMLInputElement;
  const file = input.files?.[0];
  input.value = '';
  if (!file) return;
  const err = byId('error');
  try {
    if (file.size > kMaxWeightsChars) throw new Error('file larger than 20 MB');
    const imported = parseWeightsJson(await file.text(), state);
    err.hidden = true;
    update({ ...imported.state, text: state.text });
    for (const f of numberFields) showClamp(f, state[f]); // the file's sizes are in range
    announce(`Imported ${imported.found} weight matrices.`);
  } catch (x) {
    err.hidden = false;
    err.textContent = `Could not import the weights: ${x instanceof Error ? x.message : String(x)}`;
  }
}

// The editor's row (the selected cell and its value field) and the box of its
// heatmap, made once: rebuilt on every edit, they were laid out afresh each time.
// The field's listener reads what the editor shows now.
let editor: { row: HTMLElement; where: HTMLElement; field: HTMLInputElement; box: HTMLElement; key: (i: number, j: number) => string } | null = null;

/** The value field of the editor, holding `value`. */
function editorField(value: string): HTMLInputElement {
  const field = h('input', { type: 'number', step: 'any', id: 'edit-value', 'aria-label': 'value of the selected cell', value });
  field.addEventListener('change', () => {
    // An emptied or unparsable field reads as '' (Number('') is 0): ignore it.
    const v = field.value.trim() === '' ? Number.NaN : Number(field.value);
    if (!Number.isFinite(v) || !editor) return;
    update({ edits: { ...state.edits, [editor.key(editCell[0], editCell[1])]: v }, preset: null });
  });
  return field;
}

function renderEditor(): void {
  const name = byId<HTMLSelectElement>('edit-matrix').value as MatrixName;
  const model = buildModel(state);
  const m = currentMatrix(name, model);
  const label = name === 'x' ? indexLabels(model.tokens[m.b]) : Array.from({ length: m.rows }, (_, i) => `${i + 1}`);
  const view: MatrixView = {
    id: `edit-${name}`, title: name === 'x' ? 'X: embeddings (before positional encoding)' : `${name.toUpperCase()}`,
    rows: m.rows, cols: m.cols, get: (i, j) => m.data[i * m.cols + j], rowLabels: label,
    colLabels: Array.from({ length: m.cols }, (_, j) => `${j + 1}`), rowAxis: name === 'x' ? 'token (row)' : 'input (row)', colAxis: 'feature (column)', kind: 'signed',
  };
  editCell = [Math.min(editCell[0], m.rows - 1), Math.min(editCell[1], m.cols - 1)];
  const key = (i: number, j: number) => (name === 'x' ? `x:${m.b},${i},${j}` : `${name}:${i},${j}`);
  if (!editor) {
    const where = h('span', {});
    const field = editorField('');
    editor = { row: h('p', { class: 'edit-row' }, where, field), where, field, box: h('div', { class: 'scroll' }), key };
  }
  const parts = editor;
  parts.key = key;
  const setField = () => {
    const [i, j] = editCell;
    const where = `${view.title} [${i + 1}, ${j + 1}] (${view.rowLabels[i]}) = `;
    setText(parts.where, where);
    // A new field for a new value: a write to the field on the page would cost a
    // layout of the whole page (see setValue), a new field a small one. A field
    // being typed in is left alone.
    const value = String(view.get(i, j));
    if (parts.field.value !== value && document.activeElement !== parts.field) {
      const field = editorField(value);
      parts.field.replaceWith(field);
      parts.field = field;
    }
  };
  const hm = heatmapElement(view, { selected: editCell, maxWidth: Math.min(420, widthOf('editor') || 420), onSelect: (i, j) => { editCell = [i, j]; setField(); } }, canvases.get('editor'));
  canvases.set('editor', hm);
  setField();
  if (hm.parentElement !== parts.box) parts.box.replaceChildren(hm);
  const box = byId('editor');
  if (box.firstElementChild !== parts.row || box.lastElementChild !== parts.box) box.replaceChildren(parts.row, parts.box);
}

// ---------- rendering results ----------

const stagePlayer = new Player('pipeline', (i) => update({ stage: i }, false), (i) => (stages[i] ? `Stage ${i + 1} of ${stages.length}: ${stages[i].label}` : ''));
const walkPlayer = new Player('walkthrough', (i) => { state.sel.query = Math.floor(i / kWalkSteps.length); scheduleUrl(); renderWalk(); }, (i) => `Input ${Math.floor(i / kWalkSteps.length) + 1}, step ${(i % kWalkSteps.length) + 1} of ${kWalkSteps.length}: ${kWalkSteps[i % kWalkSteps.length]}`);

function renderResult(): void {
  const r = result;
  if (!r) return;
  const b = Math.min(state.sel.seq, r.model.B - 1);
  const hd = Math.min(state.sel.head, r.model.H - 1);
  fillSelect(byId('sel-seq'), r.model.B, b, (k) => `${k + 1}: ${r.model.tokens[k].filter((t) => t !== kPad).slice(0, 5).join(' ')}…`);
  fillSelect(byId('sel-head'), r.model.H, hd, (k) => `head ${k + 1}`);
  fillSelect(byId('walk-query'), r.model.T, Math.floor(walkPlayer.position / kWalkSteps.length), (k) => `${k + 1}: ${r.model.tokens[b][k]}`);

  const stageList = byId('stages');
  const stageKey = stages.map((st) => `${st.id}:${st.label}`).join('|');
  if (stageList.dataset.key !== stageKey) {
    // Built when the stages change (block on/off, scale label); otherwise only the marks move.
    stageList.dataset.key = stageKey;
    clear(stageList);
    stages.forEach((st, k) => {
      const btn = h('button', { type: 'button', 'data-stage': st.id }, st.label);
      btn.addEventListener('click', () => stagePlayer.go(k));
      stageList.append(h('li', {}, btn));
    });
  }
  Array.from(stageList.children).forEach((li, k) => {
    const cls = k < state.stage ? 'done' : k === state.stage ? 'current' : '';
    if (li.className !== cls) li.className = cls;
    const btn = li.firstElementChild!;
    if (k === state.stage) btn.setAttribute('aria-current', 'step');
    else btn.removeAttribute('aria-current');
  });
  if (state.stage >= stages.length) state.stage = stages.length - 1;
  stagePlayer.setFrames(stages.length, state.stage);
  setText(byId('stage-explain'), stages[state.stage].explain(r));
  walkPlayer.setFrames(r.model.T * kWalkSteps.length, walkPlayer.position);
  renderWalk(false);
  renderView(r, b, hd);
  renderChecks(r, state.preset);
  renderNotes(r, b);
  for (const t of document.querySelectorAll<HTMLElement>('[role=tab]')) {
    const on = t.dataset.tab === state.tab;
    t.setAttribute('aria-selected', String(on));
    t.tabIndex = on ? 0 : -1;
    if (on) byId('view').setAttribute('aria-labelledby', t.id);
  }
}

function fillSelect(sel: HTMLSelectElement, n: number, value: number, label: (k: number) => string): void {
  // Same number of options: relabel the ones that changed instead of rebuilding them all.
  if (sel.options.length !== n) sel.replaceChildren(...Array.from({ length: n }, (_, k) => h('option', { value: k }, label(k))));
  else for (let k = 0; k < n; k++) {
    const text = label(k);
    if (sel.options[k].text !== text) sel.options[k].text = text;
  }
  setValue(sel, String(value));
  if (sel.disabled !== n <= 1) sel.disabled = n <= 1;
}

function exportBar(name: string, svg: () => SVGSVGElement, png: () => Promise<Blob>, csv?: () => string): HTMLElement {
  const mk = (label: string, act: () => void | Promise<void>) => {
    const btn = h('button', { type: 'button', class: 'small', 'aria-label': `${label} of ${name}` }, label);
    btn.addEventListener('click', () => void act());
    return btn;
  };
  const file = name.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-|-$/g, '');
  return h('div', { class: 'export-bar' },
    mk('PNG', async () => download(await png(), `${file}.png`)),
    mk('SVG', () => download(new Blob([svgText(svg())], { type: 'image/svg+xml' }), `${file}.svg`)),
    csv ? mk('CSV', () => download(new Blob([csv()], { type: 'text/csv' }), `${file}.csv`)) : null);
}

// The heatmap tab's figures, kept by slot from one update to the next. Rebuilt,
// a figure was laid out afresh on every edit (about 1.5 ms of layout at T = 64);
// kept, only its caption text and canvas change. Its export buttons read the
// matrix it shows now.
interface KeptFigure {
  element: HTMLElement;
  caption: HTMLElement;
  table: HTMLElement;
  m: MatrixView;
  title: string;
}
const keptFigures = new Map<string, KeptFigure>();

function matrixFigure(m: MatrixView, r: RunResult, b: number, hd: number, maxWidth: number, highlightRow: number | null, slot: string): HTMLElement {
  const selected: [number, number] | null = inspected && inspected.matrix.id === m.id ? [inspected.i, inspected.j] : null;
  const canvas = canvasSlot(slot, (reuse) => heatmapElement(m, {
    maxWidth, selected, highlightRow,
    onSelect: (i, j) => showInspector(r, m, b, hd, i, j),
  }, reuse));
  const labels = (list: string[]) => list.slice(0, 64).join(', ') + (list.length > 64 ? ', …' : '');
  const axes = ` (${m.rows} × ${m.cols}) · rows: ${m.rowAxis}, columns: ${m.colAxis}`;
  // The canvas draws its labels; screen readers get them here.
  const hidden = `. Rows: ${labels(m.rowLabels)}. Columns: ${labels(m.colLabels)}.`;
  let kept = keptFigures.get(slot);
  if (!kept || kept.title !== m.title) {
    // A new title names new export files: the buttons are made for it.
    const caption = h('figcaption', {});
    const table = dataTable(m);
    const fig: KeptFigure = { element: h('figure', { class: 'matrix' }), caption, table, m, title: m.title };
    fig.element.append(caption, h('div', { class: 'scroll' }, canvas),
      exportBar(m.title, () => heatmapSvg(fig.m, canvas), () => canvasToPng(canvas), () => matrixCsv(fig.m)), table);
    keptFigures.set(slot, (kept = fig));
  } else if (kept.m !== m) {
    // The data table is built from its matrix when opened: a fresh one, open if it was.
    const table = dataTable(m);
    if ((kept.table as HTMLDetailsElement).open) (table as HTMLDetailsElement).open = true;
    kept.table.replaceWith(table);
    kept.table = table;
  }
  kept.m = m;
  if (kept.caption.textContent !== m.title + axes + hidden)
    kept.caption.replaceChildren(h('strong', {}, m.title), axes, h('span', { class: 'sr-only' }, hidden));
  return kept.element;
}

function showInspector(r: RunResult, m: MatrixView, b: number, hd: number, i: number, j: number): void {
  inspected = { matrix: m, i, j };
  void import('./inspect').then(({ inspectCell }) => byId('inspect-body').replaceChildren(inspectCell(r, m, b, hd, i, j)));
}

function weightsView(r: RunResult, b: number, hd: number, maskedGrey: boolean): MatrixView {
  const t = r.attention.trace!;
  const T = r.model.T;
  const base = (b * r.model.H + hd) * T * T;
  const labels = indexLabels(r.model.tokens[b]);
  return {
    id: `weights-s${b + 1}-h${hd + 1}`, title: `Attention weights, sequence ${b + 1}, head ${hd + 1}`, rows: T, cols: T,
    get: (i, j) => (maskedGrey && t.masked.data[base + i * T + j] === -Infinity ? -Infinity : t.weights.data[base + i * T + j]),
    rowLabels: labels, colLabels: labels, rowAxis: 'query (row i)', colAxis: 'key (column j)', kind: 'prob',
  };
}

function renderView(r: RunResult, b: number, hd: number): void {
  const view = byId('view');
  const width = Math.max(320, Math.min(900, widthOf('view') || 720));
  const query = Math.floor(walkPlayer.position / kWalkSteps.length);
  const T = r.model.T;
  if (view.dataset.tab !== state.tab) view.dataset.tab = state.tab;
  if (state.tab === 'heatmap') {
    const mats = stages[state.stage].matrices(r, b, hd);
    const w = mats.length > 1 ? Math.max(300, Math.floor(width / Math.min(3, mats.length)) - 12) : width;
    const figures = mats.map((m, k) => matrixFigure(m, r, b, hd, w, m.rows === T ? query : null, `heatmap:${k}`));
    // The same figures as shown already stay where they are (moved, they would be laid out again).
    const box = view.firstElementChild;
    const shown = box?.className === 'figures' && box.children.length === figures.length && figures.every((f, k) => box.children[k] === f);
    if (!shown) view.replaceChildren(h('div', { class: 'figures' }, ...figures));
  } else if (state.tab === 'lines') {
    const t = r.attention.trace!;
    const base = (b * r.model.H + hd) * T * T;
    const inp = { tokens: r.model.tokens[b], weights: (i: number, j: number) => t.weights.data[base + i * T + j], query, title: `Head view: attention weights, sequence ${b + 1}, head ${hd + 1}`,
      onQuery: (i: number) => walkPlayer.go(i * kWalkSteps.length + kWalkSteps.length - 1) };
    const svg = linesSvg(inp);
    svg.setAttribute('tabindex', '0');
    svg.addEventListener('keydown', (e) => {
      const d = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : 0;
      if (!d) return;
      e.preventDefault();
      walkPlayer.go(Math.max(0, Math.min(T - 1, query + d)) * kWalkSteps.length + kWalkSteps.length - 1);
      (byId('view').querySelector('svg') as SVGSVGElement | null)?.focus();
    });
    const m = weightsView(r, b, hd, false);
    view.replaceChildren(h('figure', { class: 'matrix' },
      h('figcaption', {}, h('strong', {}, 'Head view'), ` · left: queries, right: keys; thicker = more weight. Query ${query + 1} is highlighted (↑/↓ to change)${T > 48 ? '; with this many tokens only its lines are drawn' : ''}.`),
      h('div', { class: 'scroll tall' }, svg), exportBar(inp.title, () => svg, () => svgToPng(svg), () => matrixCsv(m)), dataTable(m)));
  } else if (state.tab === 'heads') {
    const cell = Math.max(160, Math.floor(width / Math.min(4, r.model.H)) - 12);
    const figs = Array.from({ length: r.model.H }, (_, k) => {
      const m = weightsView(r, b, k, false);
      m.title = `Head ${k + 1}`;
      const canvas = canvasSlot(`heads:${k}`, (reuse) => heatmapElement(m, { maxWidth: cell, compact: true, selected: null, onSelect: () => update({ sel: { ...state.sel, head: k } }, false) }, reuse));
      return h('figure', { class: `matrix mini${k === hd ? ' current' : ''}` }, h('figcaption', {}, `Head ${k + 1}${k === hd ? ' (selected)' : ''}: rows queries, columns keys`), canvas, dataTable(m));
    });
    const gridSvg = () => composeSvg(Array.from({ length: r.model.H }, (_, k) => heatmapSvg({ ...weightsView(r, b, k, false), title: `Head ${k + 1}` }, null)), 2);
    view.replaceChildren(h('p', { class: 'explain' }, 'Every head’s attention weights (rows: queries, columns: keys). Each head has its own W_Q, W_K, W_V columns, so each learns to look for something else. Click one to select it.'),
      h('div', { class: 'grid' }, ...figs), exportBar(`All heads, sequence ${b + 1}`, gridSvg, () => svgToPng(gridSvg())));
  } else if (state.tab === 'bars') {
    const t = r.attention.trace!;
    const rowOf = (x: { data: Float32Array; shape: number[] }, four: boolean) => {
      const X = x.shape[x.shape.length - 1];
      const base = four ? ((b * r.model.H + hd) * T + query) * X : (b * T + query) * X;
      return x.data.subarray(base, base + X);
    };
    const tok = r.model.tokens[b][query];
    const series = [
      { name: 'x (input)', values: rowOf(r.x, false) },
      { name: 'q (query)', values: rowOf(t.q, true) },
      { name: 'k (key)', values: rowOf(t.k, true) },
      { name: 'v (value)', values: rowOf(t.v, true) },
      { name: 'output', values: rowOf(t.headOutputs, true) },
    ];
    const title = `Vectors of token ${query + 1} “${tok}” (head ${hd + 1})`;
    const svg = barsSvg(title, series);
    const m: MatrixView = { id: 'vectors', title, rows: series.length, cols: Math.max(...series.map((x) => x.values.length)), get: (i, j) => series[i].values[j] ?? Number.NaN, rowLabels: series.map((x) => x.name), colLabels: Array.from({ length: 64 }, (_, j) => `${j + 1}`), rowAxis: 'vector', colAxis: 'component', kind: 'signed' };
    view.replaceChildren(h('figure', { class: 'matrix' }, h('figcaption', {}, h('strong', {}, title), ' · choose the token with the query selector of section 3'), svg, exportBar(title, () => svg, () => svgToPng(svg), () => matrixCsv(m)), dataTable(m)));
  } else {
    const cell = Math.max(220, Math.floor(width / Math.min(3, r.model.B)) - 12);
    const figs = Array.from({ length: r.model.B }, (_, k) => {
      const m = weightsView(r, k, hd, true);
      m.title = `Sequence ${k + 1} (length ${r.model.lengths[k]} of ${T})`;
      const canvas = canvasSlot(`batch:${k}`, (reuse) => heatmapElement(m, { maxWidth: cell, onSelect: (i, j) => { update({ sel: { ...state.sel, seq: k } }, false); showInspector(r, { ...weightsView(r, k, hd, false), id: 'weights' }, k, hd, i, j); } }, reuse));
      return h('figure', { class: 'matrix mini' }, h('figcaption', {}, m.title), canvas, dataTable(m));
    });
    const batchSvg = () => composeSvg(Array.from({ length: r.model.B }, (_, k) => heatmapSvg({ ...weightsView(r, k, hd, true), title: `Sequence ${k + 1}` }, null)), 3);
    view.replaceChildren(h('p', { class: 'explain' }, `Batch of ${r.model.B} sequence${r.model.B > 1 ? 's' : ''} padded to T = ${T}, head ${hd + 1}: attention weights (rows: queries, columns: keys). Grey hatched cells are masked (${state.mask}); padding tokens are shown as ${kPad}.${r.model.B === 1 ? ' Put one sentence per line in the text box to make a batch.' : ''}`),
      h('div', { class: 'grid' }, ...figs), exportBar(`Batch, head ${hd + 1}`, batchSvg, () => svgToPng(batchSvg())));
  }
}

function renderWalk(withView = true): void {
  const r = result;
  if (!r) return;
  const b = Math.min(state.sel.seq, r.model.B - 1);
  const hd = Math.min(state.sel.head, r.model.H - 1);
  const query = Math.min(r.model.T - 1, Math.floor(walkPlayer.position / kWalkSteps.length));
  const step = walkPlayer.position % kWalkSteps.length;
  setValue(byId<HTMLSelectElement>('walk-query'), String(query));
  byId('walk-body').replaceChildren(walkthrough(r, b, hd, query, step));
  if (withView && (state.tab === 'heatmap' || state.tab === 'lines' || state.tab === 'bars')) renderView(r, b, hd);
}

// ---------- start ----------

async function start(): Promise<void> {
  bindControls();
  observeWidths('view', 'editor');
  let resizeTimer = 0;
  let lastWidth = window.innerWidth;
  window.addEventListener('resize', () => {
    clearTimeout(resizeTimer);
    resizeTimer = window.setTimeout(() => {
      if (window.innerWidth === lastWidth) return;
      lastWidth = window.innerWidth;
      renderEditor();
      renderResult();
    }, 200);
  });
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => { forgetTheme(); renderEditor(); renderResult(); });
  byId('stage-player').append(stagePlayer.element);
  byId('walk-player').append(walkPlayer.element);
  try {
    const decoded = await decodeLink(location.hash);
    if (decoded) {
      state = decoded.state;
      // A link asking for out-of-range sizes gets the same notes as the fields.
      for (const f of numberFields) if (f in decoded.raw) showClamp(f, decoded.raw[f]);
    }
  } catch (e) {
    const err = byId('error');
    err.hidden = false;
    err.textContent = e instanceof Error ? e.message : String(e);
  }
  walkPlayer.setFrames(1e6, state.sel.query * kWalkSteps.length + kWalkSteps.length - 1);
  syncControls();
  scheduleRun();
  engineVersion().then((v) => {
    engineName = v;
    byId('engine-info').textContent = `Engine: attnscope ${v}, running in a Web Worker.`;
  }).catch(() => undefined);
}

void start();
