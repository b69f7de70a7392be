// Which T×T tensor the small-multiple views (All heads, Batch) show at a stage: the
// stage's own when it is one of scores, scaled, masked or weights; else the weights.
import type { Stage } from '../stages';

export type SquareName = 'scores' | 'scaled' | 'masked' | 'weights';

export function squareAt(stages: Stage[], stage: number): { name: SquareName; own: boolean } {
  const id = stages[stage]?.id;
  return id === 'scores' || id === 'scaled' || id === 'masked' || id === 'weights'
    ? { name: id, own: true }
    : { name: 'weights', own: false };
}

export const kSquareTitle: Record<SquareName, string> = {
  scores: 'scores Q·Kᵀ',
  scaled: 'scaled scores',
  masked: 'masked scores',
  weights: 'attention weights',
};
