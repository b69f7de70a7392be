// The whole page state: everything a shared link must reproduce. Plain JSON,
// sanitised on the way in so a hostile or truncated link cannot break the page.
// The page keeps it in two parts with one owner each (store.ts): the model inputs
// (what the engine computes from) and the view state (what is shown of the result).
import { splitSentences } from './tokenize';

export type MaskMode = 'none' | 'causal' | 'padding' | 'causal+padding';
export type ScaleMode = 'sqrt' | 'none' | 'temperature';
export type Activation = 'relu' | 'gelu';
/** A view's id in views/registry.ts; an unknown id shows the first view. */
export type ViewTab = string;

/** Names of every editable matrix: the inputs and the weights. */
export const kMatrixNames = ['x', 'wq', 'wk', 'wv', 'wo', 'w1', 'w2'] as const;
export type MatrixName = (typeof kMatrixNames)[number];

export interface Selection {
  seq: number; // sequence of the batch
  head: number;
  query: number; // row of scores/weights
  key: number; // column
}

/** The heatmap's zoom: `size` tokens around the focused query (0: all of them), columns from `col` (null: around the query too). */
export interface Zoom {
  size: number;
  col: number | null;
}

/**
 * The model the page computes with: the seeded toy, the model attnscope trained on the
 * King James Bible and ships, or the visitor's own GPT-2 file (which a link cannot
 * carry: it asks for the file again).
 */
export type ModelChoice = 'toy' | 'kjv' | 'gpt2';
export const kModelChoices: readonly ModelChoice[] = ['toy', 'kjv', 'gpt2'];

export interface AppState {
  v: 1;
  model: ModelChoice;
  text: string; // one sentence per line; several lines form a batch
  dModel: number; // C
  dK: number; // per-head query/key size
  dV: number; // per-head value size
  heads: number;
  seed: number;
  positional: boolean;
  scaleMode: ScaleMode;
  temperature: number; // scores are divided by it when scaleMode is 'temperature'
  mask: MaskMode;
  block: boolean; // full transformer block around the attention
  hidden: number;
  activation: Activation;
  edits: Record<string, number>; // "x:b,t,c" or "wq:i,j" → value, overriding generated numbers
  preset: string | null;
  sel: Selection;
  stage: number;
  tab: ViewTab;
  inspect: string | null; // id of the matrix whose cell (sel.query, sel.key) is inspected
  perMatrixScale: boolean; // each heatmap's colours stretched to its own range
  zoom: Zoom | null; // null: chosen by the length (long inputs open zoomed in)
}

/** The keys of AppState that are view state; all others are model inputs. */
export const kViewKeys = ['sel', 'stage', 'tab', 'inspect', 'perMatrixScale', 'zoom'] as const;

export const kLimits = {
  dModel: [1, 512],
  dK: [1, 256],
  dV: [1, 256],
  heads: [1, 16],
  hidden: [1, 2048],
  seed: [0, 2 ** 32 - 1],
  textChars: 2_000_000, // what a link or file may carry; the visitor's own typing is never cut
  edits: 20000,
  sentences: 16,
} as const;

export const kMaxTemperature = 1e6;
/** Below this, 1 / temperature makes scores too large for float32 to mean anything. */
export const kMinTemperature = 1e-6;

const kToyText = "The animal didn't cross the street because it was too tired.";
/**
 * The KJV model's opening verse (Genesis 1:4): "it" stands for "light", as "it" stands
 * for "animal" in the toy's tutorial sentence, and "God" and "light" come back, so the
 * same-word and previous-token heads have something to show. Its tokens under the
 * model's tokenizer: And|␣God|␣saw|␣the|␣light|,|␣that|␣it|… (checked by tests/e2e).
 */
const kKjvText =
  'And God saw the light, that it was good: and God divided the light from the darkness.';
const kKjvIt = 7;
const kKjvLight = 4;
/** The softmax stage: where the page opens, with the weights on screen. */
export const kSoftmaxStage = 5;

/** The page with nothing chosen: the KJV model, or the state a link to `model` starts from. */
export function defaultState(model: ModelChoice = 'kjv'): AppState {
  // Opens on "it" looking at what it stands for: the tutorial's example of what attention is for.
  const words = splitSentences(kToyText)[0];
  const kjv = model === 'kjv';
  const query = kjv ? kKjvIt : Math.max(0, words.indexOf('it'));
  const key = kjv ? kKjvLight : Math.max(0, words.indexOf('animal'));
  return {
    v: 1,
    model,
    text: kjv ? kKjvText : kToyText,
    dModel: 16,
    dK: 8,
    dV: 8,
    heads: 2,
    seed: 42,
    positional: false,
    scaleMode: 'sqrt',
    temperature: 1,
    mask: 'none',
    block: false,
    hidden: 32,
    activation: 'relu',
    edits: {},
    preset: null,
    sel: { seq: 0, head: 0, query, key },
    stage: kSoftmaxStage,
    tab: 'heatmap',
    inspect: 'weights',
    perMatrixScale: false,
    zoom: null,
  };
}

function int(v: unknown, [lo, hi]: readonly [number, number], fallback: number): number {
  const n = typeof v === 'number' ? v : Number.NaN;
  if (!Number.isFinite(n)) return fallback;
  return Math.min(hi, Math.max(lo, Math.round(n)));
}

function oneOf<T extends string>(v: unknown, options: readonly T[], fallback: T): T {
  return options.includes(v as T) ? (v as T) : fallback;
}

const kEditKey = /^(x|wq|wk|wv|wo|w1|w2):\d{1,5}(,\d{1,5}){1,2}$/;

/** Builds a valid state from untrusted JSON (a link, an imported file). */
export function sanitizeState(raw: unknown): AppState {
  if (typeof raw !== 'object' || raw === null) return defaultState();
  const r = raw as Record<string, unknown>;
  // A link written before the page offered models holds no model: it was the toy's.
  const d = defaultState(oneOf(r.model, kModelChoices, 'toy'));
  const edits: Record<string, number> = {};
  if (typeof r.edits === 'object' && r.edits !== null) {
    let count = 0;
    for (const [k, v] of Object.entries(r.edits as Record<string, unknown>)) {
      if (count >= kLimits.edits) break;
      if (kEditKey.test(k) && typeof v === 'number' && Number.isFinite(v)) {
        edits[k] = v;
        count++;
      }
    }
  }
  const sel = (typeof r.sel === 'object' && r.sel !== null ? r.sel : {}) as Record<string, unknown>;
  const temperature =
    typeof r.temperature === 'number' && r.temperature > 0 && r.temperature <= kMaxTemperature
      ? Math.max(kMinTemperature, r.temperature)
      : 1;
  return {
    v: 1,
    model: d.model,
    text: typeof r.text === 'string' ? r.text.slice(0, kLimits.textChars) : d.text,
    dModel: int(r.dModel, kLimits.dModel, d.dModel),
    dK: int(r.dK, kLimits.dK, d.dK),
    dV: int(r.dV, kLimits.dV, d.dV),
    heads: int(r.heads, kLimits.heads, d.heads),
    seed: int(r.seed, kLimits.seed, d.seed),
    positional: r.positional === true,
    scaleMode: oneOf(r.scaleMode, ['sqrt', 'none', 'temperature'] as const, d.scaleMode),
    temperature,
    mask: oneOf(r.mask, ['none', 'causal', 'padding', 'causal+padding'] as const, d.mask),
    block: r.block === true,
    hidden: int(r.hidden, kLimits.hidden, d.hidden),
    activation: oneOf(r.activation, ['relu', 'gelu'] as const, d.activation),
    edits,
    preset: typeof r.preset === 'string' && /^[a-z0-9-]{1,40}$/.test(r.preset) ? r.preset : null,
    sel: {
      seq: int(sel.seq, [0, 1023], 0),
      head: int(sel.head, [0, 15], 0),
      query: int(sel.query, [0, 1023], r.sel === undefined ? d.sel.query : 0),
      key: int(sel.key, [0, 1023], r.sel === undefined ? d.sel.key : 0),
    },
    stage: int(r.stage, [0, 20], d.stage),
    tab: typeof r.tab === 'string' && /^[a-z-]{1,20}$/.test(r.tab) ? r.tab : d.tab,
    inspect:
      typeof r.inspect === 'string' && /^[A-Za-z0-9-]{1,40}$/.test(r.inspect) ? r.inspect : null,
    perMatrixScale: r.perMatrixScale === true,
    zoom: zoomOf(r.zoom),
  };
}

function zoomOf(raw: unknown): Zoom | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const z = raw as Record<string, unknown>;
  return {
    size: int(z.size, [0, 1024], 0),
    col: z.col === null || z.col === undefined ? null : int(z.col, [0, 1023], 0),
  };
}

const kFieldNames = {
  dModel: 'd_model',
  dK: 'd_k',
  dV: 'd_v',
  heads: 'heads',
  hidden: 'hidden',
  seed: 'seed',
  temperature: 'temperature',
} as const;

/**
 * '' when the value asked for is the one used, else a sentence naming the field's
 * limits and the value used instead, e.g. "heads must be 1–16; using 16".
 */
export function clampNote(field: keyof typeof kFieldNames, asked: unknown, used: number): string {
  if (asked === used) return '';
  const name = kFieldNames[field];
  const fmt = (x: number) => x.toLocaleString('en', { maximumFractionDigits: 6 });
  if (field === 'temperature') {
    if (typeof asked === 'number' && asked > 0 && asked < kMinTemperature)
      return `${name} must be at least ${fmt(kMinTemperature)} (a smaller one makes the scores overflow); using ${fmt(used)}`;
    return `${name} must be above 0 and at most ${fmt(kMaxTemperature)}; using ${fmt(used)}`;
  }
  const [lo, hi] = kLimits[field];
  const whole =
    typeof asked === 'number' && Number.isFinite(asked) && !Number.isInteger(asked)
      ? 'a whole number '
      : '';
  return `${name} must be ${whole}${fmt(lo)}–${fmt(hi)}; using ${fmt(used)}`;
}
