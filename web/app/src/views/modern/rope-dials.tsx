// One dial per position: pair p of a query and a key as 2-D vectors, before (dashed)
// and after (solid) the engine's rotation by pos·θ_p. While `turn` < 1 (the animation)
// the solid vectors are the dashed ones turned by turn·pos·θ_p; at 1 they are the
// engine's rotated q and k.
import { fmt } from '../../format';

export interface DialsProps {
  tokens: string[];
  p: number; // the pair: components (p, p + d/2)
  d: number;
  theta: number; // base^(−2p/d)
  q: Float32Array; // (T, d) before rotation
  k: Float32Array;
  qRot: Float32Array; // (T, d) after: the engine's trace.qRotated
  kRot: Float32Array;
  width: number;
  turn: number; // 0…1
}

const kMaxDials = 32;

export function RopeDials(p: DialsProps) {
  const T = Math.min(p.tokens.length, kMaxDials);
  const half = p.d / 2;
  const pair = (m: Float32Array, t: number): [number, number] => [m[t * p.d + p.p], m[t * p.d + p.p + half]];
  let norm = 1e-12;
  for (let t = 0; t < T; t++)
    for (const m of [p.q, p.k]) norm = Math.max(norm, Math.hypot(...pair(m, t)));
  const size = 78;
  const perRow = Math.max(1, Math.floor(p.width / size));
  const rows = Math.ceil(T / perRow);
  const w = Math.min(T, perRow) * size;
  const h = rows * (size + 22);
  const arrow = (x: number, y: number, [a, b]: [number, number], cls: string) => {
    const R = (size / 2 - 8) / norm;
    return <line x1={x} y1={y} x2={x + a * R} y2={y - b * R} class={cls} />;
  };
  return (
    <svg class="rope-dials" width={w} height={h} viewBox={`0 0 ${w} ${h}`} role="img" font-family="system-ui, sans-serif" font-size="10"
      aria-label={`Pair ${p.p + 1} of the query (orange) and key (purple) of each of the first ${T} tokens, before (dashed) and after (solid) rotation by position times ${fmt(p.theta, 4)} radians`}>
      <defs>
        <marker id="rope-head" viewBox="0 0 6 6" refX="5" refY="3" markerWidth="5" markerHeight="5" orient="auto-start-reverse">
          <path d="M0 0 L6 3 L0 6 z" fill="context-stroke" />
        </marker>
      </defs>
      {Array.from({ length: T }, (_, t) => {
        const cx = (t % perRow) * size + size / 2;
        const cy = Math.floor(t / perRow) * (size + 22) + size / 2;
        const angle = t * p.theta;
        const shown = (p.turn * angle) % (2 * Math.PI);
        const turned = (m: Float32Array, rot: Float32Array): [number, number] => {
          if (p.turn >= 1) return pair(rot, t);
          const [a, b] = pair(m, t);
          const c = Math.cos(p.turn * angle);
          const s = Math.sin(p.turn * angle);
          return [a * c - b * s, a * s + b * c];
        };
        const r = size / 2 - 6;
        const large = shown > Math.PI ? 1 : 0;
        return (
          <g data-pos={t}>
            <circle cx={cx} cy={cy} r={r} class="dial" />
            {shown > 0.02 && (
              <path d={`M${cx + 10} ${cy} A10 10 0 ${large} 0 ${cx + 10 * Math.cos(shown)} ${cy - 10 * Math.sin(shown)}`} class="dial-angle" />
            )}
            {arrow(cx, cy, pair(p.q, t), 'vec q before')}
            {arrow(cx, cy, pair(p.k, t), 'vec k before')}
            {arrow(cx, cy, turned(p.q, p.qRot), 'vec q')}
            {arrow(cx, cy, turned(p.k, p.kRot), 'vec k')}
            <text x={cx} y={cy + size / 2 + 6} text-anchor="middle" fill="currentColor">{`${t} ${p.tokens[t].slice(0, 8)}`}</text>
            <text x={cx} y={cy + size / 2 + 17} text-anchor="middle" fill="currentColor">{`${fmt(angle, 2)} rad`}</text>
          </g>
        );
      })}
    </svg>
  );
}
