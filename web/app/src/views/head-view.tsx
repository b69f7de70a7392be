// Head view: queries on the left, keys on the right, one line per pair whose width
// and opacity are the attention weight. The drawing fits its box whatever T is.
import { softmaxRowAt } from '../anim/frames';
import { stageTime } from '../anim/clock';
import { matrixCsv as csvOf } from '../export';
import { full } from '../format';
import { selectQuery } from '../store';
import { sliceOf } from '../tensor';
import { DataTable, ExportBar, svgOf } from './common';
import { weightsMatrix } from './weights-matrix';
import type { ViewProps } from './types';

const kAllLinesUpTo = 48; // beyond this only the focused query's lines are drawn
const kHeight = 560; // px: the box the drawing fits in

export function HeadView({ r, stages, view, b, head, query }: ViewProps) {
  const T = r.model.T;
  const tokens = r.model.tokens[b];
  const w = sliceOf(r.attention.trace!.weights, b, head);
  const row = Math.min(20, (kHeight - 40) / T);
  const labelEvery = Math.max(1, Math.ceil(11 / row));
  const width = 520;
  const height = 56 + T * row;
  const xl = 150;
  const xr = width - 150;
  const y = (i: number) => 48 + (i + 0.5) * row;
  const title = `Head view: attention weights, sequence ${b + 1}, head ${head + 1}`;
  const beforeSoftmax =
    stages[view.stage] && stages.findIndex((s) => s.id === 'weights') > view.stage;
  // The drawing at moment t of the softmax stage: the page shows the current moment
  // (the focused query's lines follow its row being normalised), an export t = 1.
  const picture = (t: number) => {
    const focused = softmaxRowAt(r, b, head, query, t).values;
    const weight = (i: number, j: number) => (i === query ? Math.min(1, focused[j]) : w.get(i, j));
    const lines = [];
    for (let i = 0; i < T; i++) {
      if (T > kAllLinesUpTo && i !== query) continue;
      for (let j = 0; j < T; j++) {
        const v = weight(i, j);
        if (!(v > 0.005)) continue;
        const on = i === query;
        lines.push(
          <line
            x1={xl + 6}
            y1={y(i)}
            x2={xr - 6}
            y2={y(j)}
            stroke={on ? '#b34700' : '#5e3c99'}
            stroke-width={(on ? 1 : 0.5) + 5 * v}
            stroke-opacity={Math.min(1, (on ? 0.25 : 0.08) + v * (on ? 0.9 : 0.5))}
          >
            <title>{`${tokens[i]} → ${tokens[j]}: ${full(v)}`}</title>
          </line>,
        );
      }
    }
    return (
      <svg
        xmlns="http://www.w3.org/2000/svg"
        width={width}
        height={height}
        viewBox={`0 0 ${width} ${height}`}
        class="lines-view"
        font-family="system-ui, sans-serif"
        font-size={Math.min(12, Math.max(8, row - 2))}
        role="img"
        // lower case: Preact sets attributes on SVG as written, and SVG attribute names are case-sensitive
        tabindex={0}
        aria-label={`${title}. Left column: queries; right column: keys. Line thickness is the attention weight of the query on the key. Up and down arrows change the query.`}
        onKeyDown={(e) => {
          const d = e.key === 'ArrowDown' ? 1 : e.key === 'ArrowUp' ? -1 : 0;
          if (!d) return;
          e.preventDefault();
          selectQuery(Math.max(0, Math.min(T - 1, query + d)));
        }}
      >
        <title>{title}</title>
        <text x={4} y={14} font-weight={600} fill="currentColor">
          {title}
        </text>
        <text x={xl} y={34} text-anchor="end" font-weight={600} fill="currentColor">
          query
        </text>
        <text x={xr} y={34} font-weight={600} fill="currentColor">
          key
        </text>
        <g>{lines}</g>
        {tokens.map(
          (t, i) =>
            (i % labelEvery === 0 || i === query) && (
              <g>
                <text
                  x={xl}
                  y={y(i)}
                  text-anchor="end"
                  dominant-baseline="middle"
                  font-weight={i === query ? 700 : 400}
                  fill="currentColor"
                  class="query-label"
                  onClick={() => selectQuery(i)}
                >{`${t} ${i + 1}`}</text>
                <text
                  x={xr}
                  y={y(i)}
                  dominant-baseline="middle"
                  fill="currentColor"
                >{`${i + 1} ${t}`}</text>
              </g>
            ),
        )}
      </svg>
    );
  };
  const m = weightsMatrix(r, b, head);
  return (
    <figure class="matrix">
      <figcaption>
        <strong>Head view</strong>
        {` · left: queries, right: keys; thicker = more weight. Query ${query + 1} “${tokens[query]}” is highlighted (↑/↓ to change)${T > kAllLinesUpTo ? '; with this many tokens only its lines are drawn' : ''}.`}
        {beforeSoftmax &&
          ' These are the weights of the softmax stage, still ahead in the pipeline.'}
      </figcaption>
      <div class="scroll tall">
        {picture(stages[view.stage]?.id === 'weights' ? stageTime.value : 1)}
      </div>
      {/* The files hold the engine's weights, whatever moment of softmax is on screen. */}
      <ExportBar
        name={title}
        exports={{
          svg: () => svgOf(picture(1)),
          csv: () => csvOf(m),
        }}
      />
      <DataTable m={m} />
    </figure>
  );
}
