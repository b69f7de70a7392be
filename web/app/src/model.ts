// Turns the page state into the numbers handed to the engine: token lists,
// static per-word embeddings, and seeded weights with the user's edits applied.
// This is input generation only; every result is computed by the engine.
import { gaussian, hashString, mulberry32 } from './prng';
import type { AppState, MatrixName } from './state';
import type { AttentionSizes } from './reference';
import { sliceOf } from './tensor';
import { splitSentences } from './tokenize';

export const kPad = '<pad>';

export interface MatrixSpec {
  rows: number;
  cols: number;
  data: Float32Array;
}

export interface Model extends AttentionSizes {
  hidden: number;
  activation: 'relu' | 'gelu';
  tokens: string[][]; // B × T, shorter sentences padded with kPad
  lengths: number[];
  embeddings: Float32Array; // (B, T, C) before positional encoding
  weights: Record<Exclude<MatrixName, 'x'>, MatrixSpec>;
  scale: boolean | number;
  scaleFactor: number; // what the scores are multiplied by
  maskSpec: 'none' | 'causal' | { causal: boolean; lengths: number[] };
}

/** Same (lowercased) word → same vector: a static embedding, as in word2vec. */
export function wordVector(word: string, dim: number): Float32Array {
  const next = gaussian(mulberry32(hashString(word.toLowerCase())));
  const v = new Float32Array(dim);
  for (let i = 0; i < dim; i++) v[i] = next();
  return v;
}

function seededMatrix(name: string, seed: number, rows: number, cols: number): Float32Array {
  const next = gaussian(mulberry32((hashString(name) ^ seed) >>> 0));
  const scale = 1 / Math.sqrt(rows); // keeps X·W at the size of X, like Xavier/Kaiming
  const m = new Float32Array(rows * cols);
  for (let i = 0; i < m.length; i++) m[i] = next() * scale;
  return m;
}

function applyEdits(
  name: MatrixName,
  m: Float32Array,
  dims: number[],
  edits: Record<string, number>,
): void {
  const prefix = `${name}:`;
  for (const [key, value] of Object.entries(edits)) {
    if (!key.startsWith(prefix)) continue;
    const idx = key.slice(prefix.length).split(',').map(Number);
    if (idx.length !== dims.length || idx.some((v, i) => v >= dims[i])) continue;
    // (b, i, j) of a (B, T, C) tensor or (i, j) of a matrix: the last two are the matrix's.
    const [i, j] = idx.slice(-2);
    sliceOf({ data: m, shape: dims }, idx.length === 3 ? idx[0] : 0).row(i)[j] = value;
  }
}

export function weightShapes(s: Pick<AppState, 'dModel' | 'dK' | 'dV' | 'heads' | 'hidden'>) {
  const C = s.dModel;
  return {
    wq: [C, s.heads * s.dK],
    wk: [C, s.heads * s.dK],
    wv: [C, s.heads * s.dV],
    wo: [s.heads * s.dV, C],
    w1: [C, s.hidden],
    w2: [s.hidden, C],
  } as const;
}

export function buildModel(state: AppState): Model {
  const sentences = splitSentences(state.text).slice(0, 16);
  const T = Math.max(1, ...sentences.map((s) => s.length));
  const B = sentences.length;
  const C = state.dModel;
  const tokens = sentences.map((s) => [...s, ...Array<string>(T - s.length).fill(kPad)]);
  const lengths = sentences.map((s) => Math.max(1, s.length));
  const embeddings = new Float32Array(B * T * C);
  tokens.forEach((row, b) => {
    const x = sliceOf({ data: embeddings, shape: [B, T, C] }, b);
    row.forEach((tok, t) => {
      if (tok !== kPad) x.row(t).set(wordVector(tok, C));
    });
  });
  applyEdits('x', embeddings, [B, T, C], state.edits);

  const shapes = weightShapes(state);
  const weights = {} as Model['weights'];
  for (const [name, [rows, cols]] of Object.entries(shapes) as [
    keyof typeof shapes,
    readonly [number, number],
  ][]) {
    const data = seededMatrix(name, state.seed, rows, cols);
    applyEdits(name, data, [rows, cols], state.edits);
    weights[name] = { rows, cols, data };
  }

  const scale: boolean | number =
    state.scaleMode === 'sqrt' ? true : state.scaleMode === 'none' ? false : 1 / state.temperature;
  const scaleFactor = scale === true ? 1 / Math.sqrt(state.dK) : scale === false ? 1 : scale;
  const padding = state.mask === 'padding' || state.mask === 'causal+padding';
  const causal = state.mask === 'causal' || state.mask === 'causal+padding';
  const maskSpec: Model['maskSpec'] = padding ? { causal, lengths } : causal ? 'causal' : 'none';
  return {
    B,
    T,
    C,
    H: state.heads,
    dK: state.dK,
    dV: state.dV,
    hidden: state.hidden,
    activation: state.activation,
    tokens,
    lengths,
    embeddings,
    weights,
    scale,
    scaleFactor,
    maskSpec,
  };
}
