// The attention weights of one sequence and head as a MatrixView (Head view,
// All heads and Batch); `maskedGrey` shows masked keys as −∞ (hatched grey).
import type { RunResult } from '../compute';
import { sliceOf } from '../tensor';
import { indexLabels, type MatrixView } from './matrix';

export function weightsMatrix(
  r: RunResult,
  b: number,
  head: number,
  maskedGrey = false,
  name: 'weights' | 'scores' | 'scaled' | 'masked' = 'weights',
): MatrixView {
  const t = r.attention.trace!;
  const values = sliceOf(t[name], b, head);
  const masked = sliceOf(t.masked, b, head);
  const labels = indexLabels(r.model.tokens[b]);
  return {
    id: name,
    title: `Attention ${name === 'weights' ? 'weights' : name}, sequence ${b + 1}, head ${head + 1}`,
    rows: values.rows,
    cols: values.cols,
    get: (i, j) => (maskedGrey && masked.get(i, j) === -Infinity ? -Infinity : values.get(i, j)),
    rowLabels: labels,
    colLabels: labels,
    rowAxis: 'query (row i)',
    colAxis: 'key (column j)',
    kind: name === 'weights' ? 'prob' : 'signed',
  };
}
