// Reads an imported weights file (the JSON written by "Export weights") into
// page-state edits. Pure and DOM-free so it can be tested on hostile input;
// every refusal is an Error whose message tells the visitor what was wrong.
import { weightShapes } from './model';
import { kLimits, sanitizeState, type AppState } from './state';

export const kMaxWeightsChars = 20_000_000;

export interface ImportedWeights {
  state: AppState; // the current state with the file's sizes and edits applied
  found: number; // how many weight matrices the file held
  notes: string[]; // sizes in the file that were not usable, and the value kept instead
}

const kSizes = ['dModel', 'dK', 'dV', 'heads', 'hidden', 'seed'] as const;

/** The file's sizes that are whole numbers in range; each other one is named in `notes`. */
function usableSizes(
  o: Record<string, unknown>,
  current: AppState,
  notes: string[],
): Record<string, number> {
  const out: Record<string, number> = {};
  for (const k of kSizes) {
    if (!Object.prototype.hasOwnProperty.call(o, k)) continue;
    const v = o[k];
    const [lo, hi] = kLimits[k];
    if (typeof v === 'number' && Number.isInteger(v) && v >= lo && v <= hi) out[k] = v;
    else
      notes.push(
        `${k} in the file (${String(JSON.stringify(v)).slice(0, 40)}) is not a whole number ${lo}–${hi}; keeping ${current[k]}`,
      );
  }
  return out;
}

export function parseWeightsJson(text: string, current: AppState): ImportedWeights {
  if (text.length > kMaxWeightsChars) throw new Error('file larger than 20 MB');
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (e) {
    throw new Error(`the file is not valid JSON (${e instanceof Error ? e.message : String(e)})`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw))
    throw new Error('the file must hold a JSON object with weight matrices');
  const obj = raw as Record<string, unknown>;
  const notes: string[] = [];
  const dims = sanitizeState({ ...current, ...usableSizes(obj, current, notes) });
  const shapes = Object.entries(weightShapes(dims)).filter(([name]) =>
    Object.prototype.hasOwnProperty.call(obj, name),
  );
  if (!shapes.length) throw new Error('no weight matrix (wq, wk, wv, wo, w1, w2) found');
  // Edits of the embeddings are kept; the count is checked before any copying.
  const edits: Record<string, number> = Object.fromEntries(
    Object.entries(current.edits).filter(([k]) => k.startsWith('x:')),
  );
  const total =
    Object.keys(edits).length + shapes.reduce((n, [, [rows, cols]]) => n + rows * cols, 0);
  if (total > kLimits.edits) throw new Error('too many values for one page state');
  for (const [name, [rows, cols]] of shapes) {
    const m = obj[name];
    if (
      !Array.isArray(m) ||
      m.length !== rows ||
      m.some(
        (r) =>
          !Array.isArray(r) ||
          r.length !== cols ||
          r.some((v) => typeof v !== 'number' || !Number.isFinite(v)),
      )
    )
      throw new Error(
        `${name} must be a ${rows}×${cols} array of finite numbers${notes.length ? ` (${notes.join('; ')})` : ''}`,
      );
    (m as number[][]).forEach((r, i) => r.forEach((v, j) => (edits[`${name}:${i},${j}`] = v)));
  }
  return {
    state: sanitizeState({ ...dims, edits, preset: null, sel: current.sel }),
    found: shapes.length,
    notes,
  };
}
