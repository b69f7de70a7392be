// The page's state, with one owner per piece:
// - `inputs`: what the engine computes from (text, sizes, weights, mask…). Written by
//   the input panel (controls, chips, editor, presets, weights import) only.
// - `view`: what is shown of the result (view, stage, selection, inspected cell).
//   Written through the actions below only: the walkthrough, the heatmaps and the
//   players ask for a selection, they do not set it.
// - `run`: the last result of the engine and its stages. Written by run.ts only.
// A shared link is both parts together (AppState); the views read all three.
import { batch, computed, signal } from '@preact/signals';
import type { RunResult } from './compute';
import type { Stage } from './stages';
import {
  defaultState,
  kViewKeys,
  sanitizeState,
  type AppState,
  type Selection,
  type Zoom,
} from './state';

export type ViewState = Pick<AppState, (typeof kViewKeys)[number]>;
export type ModelInputs = Omit<AppState, (typeof kViewKeys)[number]>;

function split(s: AppState): { inputs: ModelInputs; view: ViewState } {
  const { sel, stage, tab, inspect, perMatrixScale, zoom, ...inputs } = s;
  return { inputs, view: { sel, stage, tab, inspect, perMatrixScale, zoom } };
}

const initial = split(defaultState());
export const inputs = signal<ModelInputs>(initial.inputs);
export const view = signal<ViewState>(initial.view);
export const run = signal<{ result: RunResult; stages: Stage[] } | null>(null);
/**
 * The inputs the chips and the editor show: those of the last result, or of the run
 * under way once its progress shows. Written by run.ts only, so that a quick edit
 * redraws them in the same frame as its result, not in a frame of their own while
 * the engine computes.
 */
export const shownInputs = signal<ModelInputs>(initial.inputs);

/** The whole state, as a link holds it. */
export const appState = computed<AppState>(() => ({ ...inputs.value, ...view.value }));

/** Replaces both parts (a link opened, a preset or a file applied). */
export function loadState(s: AppState): void {
  const parts = split(sanitizeState(s));
  batch(() => {
    inputs.value = { ...parts.inputs, text: s.text }; // the visitor's own text is kept whole
    view.value = parts.view;
  });
  if (!run.value) shownInputs.value = inputs.value; // nothing computed yet: show them now
}

/** Changes model inputs; the view keeps its selection. */
export function setInputs(patch: Partial<ModelInputs>): void {
  const text = typeof patch.text === 'string' ? patch.text : inputs.value.text;
  const next = split(sanitizeState({ ...appState.value, ...patch })).inputs;
  inputs.value = { ...next, text };
}

function setView(patch: Partial<ViewState>): void {
  view.value = split(sanitizeState({ ...appState.value, ...patch })).view;
}

// ---------- view actions ----------

export const showTab = (tab: string) => setView({ tab });
export const showStage = (stage: number) => setView({ stage });
export const setPerMatrixScale = (on: boolean) => setView({ perMatrixScale: on });
/** Zooms the heatmaps (null: by the length of the input). */
export const setZoom = (zoom: Zoom | null) => setView({ zoom });
export const selectSequence = (seq: number) => setView({ sel: { ...view.value.sel, seq } });
export const selectHead = (head: number) => setView({ sel: { ...view.value.sel, head } });
/** Focuses query i (its row is highlighted, the walkthrough and Vectors follow it). */
export const selectQuery = (query: number) => setView({ sel: { ...view.value.sel, query } });

/** Inspects cell (i, j) of matrix `matrix` (also focusing row i when it is a query row). */
export function inspectCell(
  matrix: string,
  i: number,
  j: number,
  at: Partial<Selection> = {},
): void {
  setView({ inspect: matrix, sel: { ...view.value.sel, ...at, query: i, key: j } });
}
