// Every head of the selected sequence side by side, on one shared colour scale,
// at the current stage (scores, scaled, masked or weights).
import { stageTime } from '../anim/clock';
import { frameOf } from '../anim/frames';
import { selectHead } from '../store';
import { largestAbs, sliceOf } from '../tensor';
import { composeSvg } from './compose';
import { ExportBar, HeatmapCanvas, Legend } from './common';
import { heatmapSvg } from './heatmap-svg';
import { kSquareTitle, squareAt } from './stage-matrix';
import type { ViewProps } from './types';
import { weightsMatrix } from './weights-matrix';

export function AllHeadsView({ r, stages, view, b, head, query, width }: ViewProps) {
  const H = r.model.H;
  const T = r.model.T;
  const { name, own } = squareAt(stages, view.stage);
  const prob = name === 'weights';
  const range = prob
    ? 1
    : largestAbs(...Array.from({ length: H }, (_, k) => sliceOf(r.attention.trace![name], b, k)));
  const cell = Math.max(160, Math.floor(width / Math.min(4, H)) - 12);
  const mats = Array.from({ length: H }, (_, k) => ({
    ...weightsMatrix(r, b, k, false, name),
    title: `Head ${k + 1}`,
  }));
  const t = stageTime.value;
  const gridSvg = () =>
    composeSvg(
      mats.map((m) => heatmapSvg(m, range)),
      2,
      `All heads: ${kSquareTitle[name]}, sequence ${b + 1}`,
    );
  return (
    <div>
      <p class="explain">
        {`Every head’s ${kSquareTitle[name]} for sequence ${b + 1} (rows: queries 1–${T}, columns: keys 1–${T}), on one shared colour scale. Each head has its own columns of W_Q, W_K and W_V, so each can weigh the tokens differently; ${r.gpt2 ? 'here they are the loaded model’s own, so a trained model’s differences are learned' : 'with the page’s random weights the differences are chance, not something learned'}. Click a head to select it.`}
        {!own && ' (This stage has no score matrix: the softmax weights are shown.)'}
      </p>
      <Legend kind={prob ? 'prob' : 'signed'} range={range} note="one scale for all heads" />
      <div class="grid">
        {mats.map((m, k) => (
          <figure class={`matrix mini${k === head ? ' current' : ''}`}>
            <figcaption>{`Head ${k + 1}${k === head ? ' (selected)' : ''}`}</figcaption>
            {/* Each head builds its focused row as the Head view does, at the same moment of the stage. */}
            <HeatmapCanvas
              m={own ? frameOf(r, stages[view.stage].id, m, b, k, query, t).m : m}
              opts={{
                maxWidth: cell,
                compact: true,
                selected: null,
                range,
                onSelect: () => selectHead(k),
              }}
            />
          </figure>
        ))}
      </div>
      <ExportBar
        name={`All heads, ${kSquareTitle[name]}, sequence ${b + 1}`}
        exports={{ svg: gridSvg }}
      />
    </div>
  );
}
