// The colour range of a stage's matrices: one shared range across the score stages
// (Q·Kᵀ, scaled, masked) so scaling visibly shrinks them; a fixed [0, 1] for
// weights; or, with per-matrix scaling on, each matrix stretched to its own range.
import type { RunResult } from '../compute';
import { largestAbs, sliceOf } from '../tensor';
import { maxAbs, type MatrixView } from './matrix';

export const kScoreStages = ['scores', 'scaled', 'masked'] as const;

/** |value| at the ends of the colour scale of matrix `m` of the stage `stageId`. */
export function colourRange(
  r: RunResult,
  stageId: string,
  m: MatrixView,
  b: number,
  head: number,
  perMatrix: boolean,
  stageMatrices: MatrixView[] = [m],
): number {
  if (perMatrix) return maxAbs(m);
  if (m.kind === 'prob') return 1;
  if ((kScoreStages as readonly string[]).includes(stageId)) {
    const t = r.attention.trace!;
    return largestAbs(...kScoreStages.map((name) => sliceOf(t[name], b, head)));
  }
  // The matrices shown together (Q, K and V; X and its positional encoding) share one range.
  return Math.max(...stageMatrices.filter((x) => x.scaleGroup === m.scaleGroup).map(maxAbs));
}

/** The note under a legend saying which range it is. */
export function rangeNote(stageId: string, kind: string, perMatrix: boolean): string {
  if (perMatrix) return 'each matrix on its own range';
  if (kind === 'prob') return 'weights on a fixed 0–1 scale';
  if ((kScoreStages as readonly string[]).includes(stageId))
    return 'one range shared by Q·Kᵀ, scaled and masked scores';
  return 'one range for the matrices of this stage';
}
