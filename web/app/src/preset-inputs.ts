// What the presets are made of: the tutorials' matrices, edits of X and the weights, and
// the rows of a result that their checks read.
import type { RunResult } from './compute';
import type { AppState } from './state';
import { rowOf } from './tensor';

export function matrixEdits(
  name: string,
  m: number[][],
  into: Record<string, number>,
): Record<string, number> {
  m.forEach((row, i) => row.forEach((v, j) => (into[`${name}:${i},${j}`] = v)));
  return into;
}

export function inputEdits(rows: number[][], into: Record<string, number>): Record<string, number> {
  rows.forEach((row, t) => row.forEach((v, c) => (into[`x:0,${t},${c}`] = v)));
  return into;
}

/** Row i of the attention weights (sequence b, head h). */
export function weightRow(r: RunResult, i: number, b = 0, h = 0): number[] {
  return Array.from(rowOf(r.attention.trace!.weights, b, h, i));
}

export function scoreRow(r: RunResult, i: number, b = 0, h = 0): number[] {
  return Array.from(rowOf(r.attention.trace!.scores, b, h, i));
}

/** Output row t of the attention (heads concatenated), sequence b. */
export function outputRow(r: RunResult, t: number, b = 0): number[] {
  return Array.from(rowOf(r.attention.trace!.concat, b, 0, t));
}

const kLogits = [0.1, 0.4, -0.9, 0.02, 0.35, -0.62];

export function softmaxPreset(multiplier: number): Partial<AppState> {
  // X row j = [1, logit_j]; W_Q picks the 1, W_K picks the logit, so every row of
  // Q·Kᵀ equals the logits and softmax(row) is the tutorial's softmax(logits).
  const edits: Record<string, number> = {};
  inputEdits(
    kLogits.map((l) => [1, l]),
    edits,
  );
  matrixEdits('wq', [[1], [0]], edits);
  matrixEdits('wk', [[0], [1]], edits);
  matrixEdits('wv', [[0], [1]], edits);
  return {
    text: 'l₁ l₂ l₃ l₄ l₅ l₆',
    dModel: 2,
    dK: 1,
    dV: 1,
    heads: 1,
    edits,
    scaleMode: multiplier === 1 ? 'none' : 'temperature',
    temperature: 1 / multiplier,
  };
}

export const k003Q = [
  [0.1, 0.2, 0.3],
  [0.5, 0.4, 0.3],
  [0.2, 0.1, 0.1],
  [0.0, 0.1, 0.2],
  [0.4, 0.3, 0.2],
  [0.6, 0.5, 0.4],
  [0.1, 0.1, 0.0],
  [0.7, 0.6, 0.5],
];
export const k003K = [
  [0.2, 0.1, 0.0],
  [0.6, 0.5, 0.4],
  [0.1, 0.2, 0.1],
  [0.2, 0.1, 0.3],
  [0.5, 0.4, 0.3],
  [0.7, 0.6, 0.5],
  [0.1, 0.0, 0.2],
  [0.9, 0.8, 0.7],
];
export const k003V = [
  [0.1, 0.2, 0.3],
  [0.7, 0.6, 0.5],
  [0.1, 0.1, 0.2],
  [0.0, 0.1, 0.1],
  [0.5, 0.4, 0.3],
  [0.6, 0.5, 0.4],
  [0.1, 0.1, 0.0],
  [0.8, 0.7, 0.6],
];
export const kEye3 = [
  [1, 0, 0],
  [0, 1, 0],
  [0, 0, 1],
];
export const kZero3 = [
  [0, 0, 0],
  [0, 0, 0],
  [0, 0, 0],
];
