// The loss curve: the training batches' loss (every position) and the held-out loss on
// the positions with a known answer, against steps, with the task's target as a dashed
// line and the snapshot on screen marked. Log scale: the interesting part is near 0.
const kW = 560;
const kH = 200;
const kPad = { left: 44, right: 10, top: 10, bottom: 28 };

export interface LossPoint {
  step: number;
  loss: number;
  answerLoss: number;
}

export function LossCurve({
  points,
  target,
  mark,
}: {
  points: LossPoint[];
  target: number;
  mark: number | null;
}) {
  const finite = points.flatMap((p) => [p.loss, p.answerLoss]).filter((v) => v > 0 && Number.isFinite(v));
  const hi = Math.log10(Math.max(4, ...finite));
  const lo = Math.log10(Math.min(target / 2, ...finite));
  const last = Math.max(10, points.at(-1)?.step ?? 0);
  const x = (step: number) => kPad.left + ((kW - kPad.left - kPad.right) * step) / last;
  const y = (v: number) =>
    kPad.top + ((kH - kPad.top - kPad.bottom) * (hi - Math.log10(Math.max(v, 1e-6)))) / (hi - lo);
  const line = (key: 'loss' | 'answerLoss') =>
    points
      .filter((p) => Number.isFinite(p[key]))
      .map((p, i) => `${i ? 'L' : 'M'}${x(p.step).toFixed(1)},${y(p[key]).toFixed(1)}`)
      .join('');
  const ticks = [];
  for (let e = Math.ceil(lo); e <= Math.floor(hi); e++) ticks.push(10 ** e);
  const lastPoint = points.at(-1);
  return (
    <figure class="loss-curve">
      <svg
        viewBox={`0 0 ${kW} ${kH}`}
        role="img"
        aria-labelledby="train-curve-title"
        id="train-curve"
      >
        <title id="train-curve-title">
          {lastPoint
            ? `Loss against steps, log scale: at step ${lastPoint.step} the training loss is ${lastPoint.loss.toFixed(3)} and the loss on the answers ${lastPoint.answerLoss.toFixed(3)}; the target is ${target}.`
            : 'Loss against steps: no step taken yet.'}
        </title>
        {ticks.map((t) => (
          <g key={t} class="tick">
            <line x1={kPad.left} x2={kW - kPad.right} y1={y(t)} y2={y(t)} />
            <text x={kPad.left - 4} y={y(t) + 4} text-anchor="end">
              {t >= 1 ? String(t) : t.toPrecision(1)}
            </text>
          </g>
        ))}
        <text x={kW - kPad.right} y={kH - 8} text-anchor="end" class="axis">
          {`steps (0–${last})`}
        </text>
        <line class="target" x1={kPad.left} x2={kW - kPad.right} y1={y(target)} y2={y(target)} />
        <text class="target-label" x={kW - kPad.right} y={y(target) - 4} text-anchor="end">
          {`target ${target}`}
        </text>
        <path class="all" d={line('loss')} />
        <path class="answers" d={line('answerLoss')} />
        {mark !== null && <line class="mark" x1={x(mark)} x2={x(mark)} y1={kPad.top} y2={kH - kPad.bottom} />}
      </svg>
      <figcaption>
        <span class="key all">training loss, every position</span>{' '}
        <span class="key answers">loss on the answers, held-out batch</span>
      </figcaption>
    </figure>
  );
}
