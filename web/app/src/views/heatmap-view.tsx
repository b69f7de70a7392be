// The stage's matrices as heatmaps, side by side (Q, K and V in one row), built up
// over the stage's time t (anim/frames.ts); softmax adds the focused row as bars.
import { frameOf } from '../anim/frames';
import { stageTime } from '../anim/clock';
import { inspectCell, setPerMatrixScale } from '../store';
import { Legend, MatrixFigure } from './common';
import { RowBars } from './row-bars';
import { colourRange, rangeNote } from './scales';
import type { ViewProps } from './types';

export function HeatmapView({ r, stages, view, b, head, query, width }: ViewProps) {
  const stage = stages[view.stage];
  const mats = stage.matrices(r, b, head);
  const t = stageTime.value;
  const per = mats.length > 1 ? Math.max(180, Math.floor(width / Math.min(3, mats.length)) - 12) : width;
  const ranges = mats.map((m) => colourRange(r, stage.id, m, b, head, view.perMatrixScale, mats));
  return (
    <div>
      <div class="view-tools">
        <Legend kind={mats[0].kind} range={ranges[0]} note={rangeNote(stage.id, mats[0].kind, view.perMatrixScale)} />
        <label class="check"><input type="checkbox" id="per-matrix" checked={view.perMatrixScale} onChange={(e) => setPerMatrixScale((e.currentTarget as HTMLInputElement).checked)} /> colours per matrix</label>
      </div>
      {stage.id === 'weights' && <RowBars r={r} b={b} head={head} query={query} t={t} />}
      <div class={`figures n${Math.min(3, mats.length)}`}>
        {mats.map((m, k) => {
          const frame = frameOf(r, stage.id, m, b, head, query, t);
          return (
            <MatrixFigure key={`${stage.id}:${k}`} m={m} frame={frame.m} range={ranges[k]}
              opts={{
                maxWidth: per,
                // A few rows of text fit above the figure on a laptop screen; the cells take the rest.
                maxHeight: Math.max(240, window.innerHeight - 400),
                selected: view.inspect === m.id ? [view.sel.query, view.sel.key] : null,
                highlightRow: m.rows === r.model.T ? query : null,
                highlightCol: frame.column,
                onSelect: (i, j) => inspectCell(m.id, i, j),
              }} />
          );
        })}
      </div>
    </div>
  );
}
