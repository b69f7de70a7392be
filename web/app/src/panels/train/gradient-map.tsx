// The gradient of the selected head's attention weights from the last step: the head's
// columns of c_attn (its W_Q, W_K and W_V, d_model rows each), drawn on the diverging
// scale (purple negative, orange positive) stretched to the largest magnitude shown.
import { colorTable } from '../../views/colors';
import { PixelCanvas } from './pixels';

export function GradientMap({
  gradient,
  C,
  heads,
  head,
  layer,
  width,
}: {
  /** (C, 3C): dLoss/d c_attn.weight of the layer. */
  gradient: Float32Array;
  C: number;
  heads: number;
  head: number;
  layer: number;
  width: number;
}) {
  const d = C / heads;
  // Columns of the head: W_Q's, then W_K's, then W_V's.
  const column = (j: number) => Math.floor(j / d) * C + head * d + (j % d);
  let max = 0;
  for (let i = 0; i < C; i++)
    for (let j = 0; j < 3 * d; j++) max = Math.max(max, Math.abs(gradient[i * 3 * C + column(j)]!));
  const table = colorTable('signed', 1);
  const scale = max > 0 ? 1 / max : 0;
  const cell = Math.max(1, Math.floor(width / (3 * d)));
  return (
    <figure class="train-gradient">
      <div class="gradient-parts" aria-hidden="true" style={{ width: `${cell * 3 * d}px` }}>
        <span>W_Q</span>
        <span>W_K</span>
        <span>W_V</span>
      </div>
      <PixelCanvas
        rows={C}
        cols={3 * d}
        width={cell * 3 * d}
        height={cell * C}
        label={`Gradient of layer ${layer + 1}, head ${head + 1}: W_Q, W_K and W_V side by side, ${C} rows by ${d} columns each; the largest magnitude is ${max.toExponential(2)}.`}
        color={(i, j) => table.at(gradient[i * 3 * C + column(j)]! * scale)}
      />
      <figcaption id="train-gradient-caption">
        {`dLoss/dW of layer ${layer + 1}, head ${head + 1} (rows: the ${C} inputs; columns: its ${d} query, key and value outputs). Purple negative, orange positive, ±${max.toExponential(2)}.`}
      </figcaption>
    </figure>
  );
}
