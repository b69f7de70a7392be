// A T × T map drawn on a canvas for the GPT-2 analysis panels: attention (0 to its
// maximum) or a change (diverging, purple negative, white 0, orange positive). Keys after
// the query are grey: GPT-2 is causal.
import { useLayoutEffect, useRef } from 'preact/hooks';
import { colorTable, kMaskedColor, parseColor, type ColorKind } from '../views/colors';
import { Legend } from '../views/common';

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
    const canvas = ref.current!;
    canvas.width = T;
    canvas.height = T;
    const ctx = canvas.getContext('2d')!;
    const img = ctx.createImageData(T, T);
    const table = colorTable(kind, range);
    const grey = parseColor(kMaskedColor);
    for (let k = 0; k < T * T; k++) {
      const [r, g, b] = k % T > Math.floor(k / T) ? grey : table.at(data[k]);
      img.data.set([r, g, b, 255], 4 * k);
    }
    ctx.putImageData(img, 0, 0);
  }, [data, T, kind, range]);
  return (
    <figure class="analysis-map">
      <canvas ref={ref} id={id} role="img" aria-label={label} data-max={String(range)} />
      <figcaption>{label}</figcaption>
      <Legend kind={kind} range={range} note={kind === 'signed' ? 'with − without' : undefined} />
    </figure>
  );
}
