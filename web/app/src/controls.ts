// The input panel's form (static markup in index.html) bound to the store: each
// control writes the model inputs, and an effect writes them back into the form.
import { effect } from '@preact/signals';
import { announce, byId, h, setChecked, setText, setValue } from './dom';
import { download, safeJson, stateJsonBlob } from './export';
import { engineInfo } from './engine-info';
import { applyPreset, kPresets } from './presets';
import { currentModel, runAtOnce } from './run';
import { appState, inputs, loadState, run, setInputs, type ModelInputs } from './store';
import { clampNote } from './state';
import { linkState } from './url-state';
import { bindSettingsFold, revealSetting } from './panels/settings-fold';
import { kMaxWeightsChars, parseWeightsJson } from './weights-import';

export const kNumberFields = [
  'dModel',
  'dK',
  'dV',
  'heads',
  'seed',
  'hidden',
  'temperature',
] as const;
type NumberField = (typeof kNumberFields)[number];
const kRunDelay = 120; // ms: typing is debounced once here; its run then starts at once

function showError(text: string): void {
  const err = byId('error');
  err.hidden = false;
  err.textContent = text;
}

/** Says next to a field when the value asked for was out of range and which value is used. */
export function showClamp(f: NumberField, asked: unknown): void {
  const note = byId(`${f}-note`);
  const text = clampNote(f, asked, inputs.value[f]);
  setText(note, text);
  note.hidden = !text;
  if (text) revealSetting(note);
}

function syncForm(s: ModelInputs): void {
  setValue(byId<HTMLTextAreaElement>('text'), s.text);
  for (const f of kNumberFields) setValue(byId<HTMLInputElement>(f), String(s[f]));
  setValue(byId<HTMLSelectElement>('scaleMode'), s.scaleMode);
  setValue(byId<HTMLSelectElement>('mask'), s.mask);
  setValue(byId<HTMLSelectElement>('activation'), s.activation);
  setChecked(byId<HTMLInputElement>('positional'), s.positional);
  setChecked(byId<HTMLInputElement>('block'), s.block);
  const temperature = byId('temperature-label');
  if (temperature.hidden !== (s.scaleMode !== 'temperature'))
    temperature.hidden = s.scaleMode !== 'temperature';
  setValue(byId<HTMLSelectElement>('preset'), s.preset ?? '');
  showPreset(s.preset);
  showWeightsNote(Object.keys(s.edits).some((k) => /^w[qkv]:/.test(k)));
}

/** The honesty note says whether W_Q, W_K, W_V are seeded at random or partly set by hand. */
function showWeightsNote(handSet: boolean): void {
  const note = byId('weights-note');
  if (note.dataset.handSet === String(handSet)) return;
  note.dataset.handSet = String(handSet);
  if (handSet) {
    note.replaceChildren(
      h('strong', {}, 'Weights set by hand'),
      ' (a tutorial’s or your edits; any others seeded at random), not trained: a trained model learns W_Q, W_K, W_V from data so that heads pick out relations such as “it” → “animal”.',
    );
    return;
  }
  // The way to learned patterns is one press away, not a search through the Model menu.
  const showTrained = h('button', { type: 'button', class: 'link' }, 'the trained KJV model');
  showTrained.addEventListener('click', () => setInputs({ model: 'kjv' }));
  note.replaceChildren(
    h('strong', {}, 'Random weights'),
    ' (seeded, untrained): these patterns mean nothing. See ',
    showTrained,
    ' or a GPT-2 file.',
  );
}

/** The example's note and its tutorial comparison, right under the bar; unfolded for a new example. */
function showPreset(id: string | null): void {
  const box = byId<HTMLDetailsElement>('preset-box');
  const preset = kPresets.find((p) => p.id === id);
  box.hidden = !preset;
  if (!preset) delete box.dataset.preset;
  if (!preset || box.dataset.preset === preset.id) return;
  box.dataset.preset = preset.id;
  box.open = true;
  setText(byId('preset-about'), preset.about);
}

function exportWeights(): void {
  const s = inputs.value;
  const model = currentModel();
  const out: Record<string, unknown> = {
    format: 'attnscope-weights',
    dModel: s.dModel,
    dK: s.dK,
    dV: s.dV,
    heads: s.heads,
    hidden: s.hidden,
    seed: s.seed,
  };
  for (const [name, w] of Object.entries(model.weights))
    out[name] = Array.from({ length: w.rows }, (_, i) =>
      Array.from(w.data.subarray(i * w.cols, (i + 1) * w.cols)),
    );
  download(new Blob([safeJson(out)], { type: 'application/json' }), 'attnscope-weights.json');
}

async function importWeights(input: HTMLInputElement): Promise<void> {
  const file = input.files?.[0];
  input.value = '';
  if (!file) return;
  try {
    if (file.size > kMaxWeightsChars) throw new Error('file larger than 20 MB');
    const imported = parseWeightsJson(await file.text(), appState.value);
    byId('error').hidden = true;
    setInputs({ ...imported.state, text: inputs.value.text });
    for (const f of kNumberFields) showClamp(f, inputs.value[f]); // the file's sizes are in range
    if (imported.notes.length)
      showError(`Imported ${imported.found} weight matrices, but: ${imported.notes.join('; ')}.`);
    announce(`Imported ${imported.found} weight matrices.`);
  } catch (x) {
    showError(`Could not import the weights: ${x instanceof Error ? x.message : String(x)}`);
  }
}

export function bindControls(): void {
  bindSettingsFold();
  effect(() => syncForm(inputs.value));
  const preset = byId<HTMLSelectElement>('preset');
  for (const p of kPresets) preset.append(h('option', { value: p.id }, p.title));
  preset.addEventListener('change', () => {
    const next = preset.value ? applyPreset(preset.value) : null;
    if (!next) return setInputs({ preset: null });
    loadState(next);
    for (const f of kNumberFields) showClamp(f, inputs.value[f]); // a preset's sizes are in range: clear the notes
  });
  let textTimer = 0;
  byId<HTMLTextAreaElement>('text').addEventListener('input', (e) => {
    clearTimeout(textTimer);
    const value = (e.target as HTMLTextAreaElement).value;
    textTimer = window.setTimeout(
      () => runAtOnce(() => setInputs({ text: value, preset: null })),
      kRunDelay,
    );
  });
  for (const f of kNumberFields) {
    const input = byId<HTMLInputElement>(f);
    const note = h('span', { id: `${f}-note`, class: 'field-note', role: 'status', hidden: true });
    (input.closest('label') ?? input).after(note);
    input.setAttribute('aria-describedby', note.id);
    input.addEventListener('change', () => {
      // An emptied field reads as '' (Number('') is 0): keep the current value and say so.
      const v = input.value.trim() === '' ? Number.NaN : Number(input.value);
      if (Number.isFinite(v)) setInputs({ [f]: v });
      else input.value = String(inputs.value[f]);
      showClamp(f, v);
    });
  }
  for (const f of ['scaleMode', 'mask', 'activation'] as const)
    byId<HTMLSelectElement>(f).addEventListener('change', (e) =>
      setInputs({ [f]: (e.target as HTMLSelectElement).value } as Partial<ModelInputs>),
    );
  for (const f of ['positional', 'block'] as const)
    byId<HTMLInputElement>(f).addEventListener('change', (e) =>
      setInputs({ [f]: (e.target as HTMLInputElement).checked }),
    );
  byId('reseed').addEventListener('click', () =>
    setInputs({ seed: (inputs.value.seed * 1664525 + 1013904223) >>> 0 }),
  );
  byId('clear-edits').addEventListener('click', () => setInputs({ edits: {}, preset: null }));
  byId('export-weights').addEventListener('click', exportWeights);
  byId<HTMLInputElement>('import-weights').addEventListener(
    'change',
    (e) => void importWeights(e.target as HTMLInputElement),
  );
  byId('copy-link').addEventListener('click', async () => {
    const link = await linkState(appState.value);
    try {
      await navigator.clipboard.writeText(
        `${location.origin}${location.pathname}${link.hash ?? ''}`,
      );
      announce(`Link copied.${link.note ? ` ${link.note}` : ''}`);
    } catch {
      announce('Copy the address bar to share this view.');
    }
  });
  byId('export-json').addEventListener('click', async () => {
    announce('Preparing the JSON export…');
    try {
      download(
        await stateJsonBlob(appState.value, run.value?.result ?? null, engineInfo.value),
        'attnscope-state.json',
      );
      announce('JSON export ready.');
    } catch (e) {
      showError(`Export failed: ${e instanceof Error ? e.message : String(e)}`);
    }
  });
}
