// A T × T map drawn on a canvas for the GPT-2 analysis panels: attention (0 to its
// maximum) or a change (diverging, purple negative, white 0, orange positive). Keys after
// the query are grey: GPT-2 is causal.
import { useLayoutEffect, useRef } from 'preact/hooks';
import { colorTable, kMaskedColor, parseColor, type ColorKind } from '../views/colors';
import { Legend } from '../views/common';
import { paintCells } from '../views/paint-cells';

export function AnalysisMap({
  data,
  T,
  kind,
  label,
  id,
}: {
  data: Float32Array;
  T: number;
  kind: ColorKind;
  label: string;
  id: string;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  let range = 0;
  for (const v of data) range = Math.max(range, Math.abs(v));
  range = range || 1;
  useLayoutEffect(() => {
    const table = colorTable(kind, range);
    const grey = parseColor(kMaskedColor);
    paintCells(ref.current!, T, T, (i, j) => (j > i ? grey : table.at(data[i * T + j])));
  }, [data, T, kind, range]);
  return (
    <figure class="analysis-map">
      <canvas ref={ref} id={id} role="img" aria-label={label} data-max={String(range)} />
      <figcaption>{label}</figcaption>
      <Legend kind={kind} range={range} note={kind === 'signed' ? 'with − without' : undefined} />
    </figure>
  );
}
