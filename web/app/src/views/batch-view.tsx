// Every sequence of the batch for the selected head: padding and masks visible.
import { stageTime } from '../anim/clock';
import { frameOf } from '../anim/frames';
import { kPad } from '../model';
import { inspectCell } from '../store';
import { largestAbs, sliceOf } from '../tensor';
import { composeSvg } from './compose';
import { DataTable, ExportBar, HeatmapCanvas, Legend } from './common';
import { heatmapSvg } from './heatmap-svg';
import { kSquareTitle, squareAt } from './stage-matrix';
import type { ViewProps } from './types';
import type { RunResult } from '../compute';
import { weightsMatrix } from './weights-matrix';

const maskName = (spec: RunResult['model']['maskSpec']) =>
  typeof spec === 'object'
    ? spec.causal
      ? 'causal + padding'
      : 'padding'
    : spec === 'none'
      ? 'no mask'
      : spec;

export function BatchView({ r, stages, view, head, query, width }: ViewProps) {
  const { B, T } = r.model;
  const { name, own } = squareAt(stages, view.stage);
  const t = stageTime.value;
  const prob = name === 'weights';
  const range = prob
    ? 1
    : largestAbs(
        ...Array.from({ length: B }, (_, k) => sliceOf(r.attention.trace![name], k, head)),
      );
  const cell = Math.max(220, Math.floor(width / Math.min(3, B)) - 12);
  const mats = Array.from({ length: B }, (_, k) => ({
    ...weightsMatrix(r, k, head, true, name),
    title: `Sequence ${k + 1} (length ${r.model.lengths[k]} of ${T})`,
  }));
  const batchSvg = () =>
    composeSvg(
      mats.map((m) => heatmapSvg(m, range)),
      3,
      `Batch: ${kSquareTitle[name]}, head ${head + 1}`,
    );
  return (
    <div>
      <p class="explain">{`Batch of ${B} sequence${B > 1 ? 's' : ''} padded to T = ${T}, head ${head + 1}: ${kSquareTitle[name]} (rows: queries, columns: keys). Grey hatched cells are masked (${maskName(r.model.maskSpec)}); padding tokens are shown as ${kPad}.${B > 1 ? '' : r.gpt2 ? ' A loaded model reads the whole text as one sequence (a new line is one of its tokens); the toy makes a batch of one sentence per line.' : ' Put one sentence per line in the text box to make a batch.'}`}</p>
      <Legend kind={prob ? 'prob' : 'signed'} range={range} note="one scale for the batch" />
      <div class="grid">
        {mats.map((m, k) => (
          <figure class="matrix mini">
            <figcaption>{m.title}</figcaption>
            <HeatmapCanvas
              m={own ? frameOf(r, stages[view.stage].id, m, k, head, query, t).m : m}
              opts={{
                maxWidth: cell,
                range,
                selected:
                  view.inspect === name && view.sel.seq === k
                    ? [view.sel.query, view.sel.key]
                    : null,
                onSelect: (i, j) => inspectCell(name, i, j, { seq: k }),
              }}
            />
            <DataTable m={m} />
          </figure>
        ))}
      </div>
      <ExportBar name={`Batch, head ${head + 1}`} exports={{ svg: batchSvg }} />
    </div>
  );
}
