// Softmax on the focused query's row, as bars: exp(s − max) at the start of the
// stage, divided by their sum as it plays, until the bars are the weights and sum to 1.
import { softmaxRowAt } from '../anim/frames';
import type { RunResult } from '../compute';
import { fmt } from '../format';

const kMaxBars = 64;

export function RowBars({
  r,
  b,
  head,
  query,
  t,
  from = 0,
  count = kMaxBars,
  width = 600,
}: {
  r: RunResult;
  b: number;
  head: number;
  query: number;
  t: number;
  from?: number;
  count?: number;
  width?: number; // px of the drawing
}) {
  const { values, sum } = softmaxRowAt(r, b, head, query, t);
  const shown = values.slice(from, from + Math.min(count, kMaxBars));
  const tokens = r.model.tokens[b];
  const bw = Math.max(3, Math.min(40, Math.floor((width - 60) / shown.length)));
  const height = 70;
  // Long rows have small weights: their bars are drawn against the row's largest.
  const top = values.length > 48 ? Math.max(...shown, 1e-30) : 1;
  const label = t >= 1 ? 'weights (sum 1)' : t > 0 ? 'dividing by the sum' : 'exp(s − max)';
  return (
    <figure class="row-bars" data-sum={sum}>
      <figcaption>{`Row of “${tokens[query]}” (query ${query + 1}): ${label}, Σ = ${fmt(sum, 3)}${shown.length < values.length ? ` (keys ${from + 1}–${from + shown.length} shown)` : ''}`}</figcaption>
      <svg
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        role="img"
        aria-label={`Bars of the row of query ${query + 1}: ${label}; their sum is ${fmt(sum, 3)}.`}
      >
        <line
          x1={0}
          x2={60 + bw * shown.length}
          y1={height - 14}
          y2={height - 14}
          stroke="currentColor"
          stroke-opacity={0.4}
        />
        <text x={0} y={12} font-size={10} fill="currentColor">
          {fmt(top, 3)}
        </text>
        <line
          x1={12}
          x2={60 + bw * shown.length}
          y1={8}
          y2={8}
          stroke="currentColor"
          stroke-opacity={0.2}
          stroke-dasharray="3 3"
        />
        {shown.map((v, j) => {
          const h = Math.max(0.5, Math.min(1, v / top) * (height - 22));
          return (
            <rect
              x={60 + j * bw + 1}
              y={height - 14 - h}
              width={Math.max(1, bw - 2)}
              height={h}
              fill="#21918c"
            >
              <title>{`${tokens[from + j]}: ${fmt(v, 4)}`}</title>
            </rect>
          );
        })}
        {bw >= 7 * String(from + shown.length).length &&
          shown.map((_, j) => (
            <text
              x={60 + (j + 0.5) * bw}
              y={height - 3}
              font-size={9}
              text-anchor="middle"
              fill="currentColor"
            >
              {String(from + j + 1)}
            </text>
          ))}
      </svg>
    </figure>
  );
}
