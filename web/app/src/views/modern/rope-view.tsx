// RoPE on the visitor's tokens: each pair of a query and a key turns by position × θ_p
// (the engine's rotated q and k, trace.qRotated / kRotated), and the score of a query
// and a key depends on how far apart they are, not on where: the engine scores one
// token's query against another's key at every pair of positions, and every diagonal
// of that matrix holds one number.
import { useEffect, useState } from 'preact/hooks';
import { fmt, full } from '../../format';
import { colorScale } from '../colors';
import type { ViewProps } from '../types';
import { ClipNote } from './clip-note';
import { CellGrid, Swatch, type GridBox } from './cell-grid';
import { fitting, headBlock, headTensors, readiness, runKey, useEngine } from './engine-call';
import { Pick, Slider } from './fields';
import { RopeDials } from './rope-dials';

const kBases = [10000, 500000, 100];
const kTurnMs = 1600;

/** 0 → 1 over kTurnMs each time `key` changes or `again` is called; 1 at once with reduced motion. */
function useTurn(key: string): [number, () => void] {
  const [turn, setTurn] = useState(1);
  const [round, setRound] = useState(0);
  useEffect(() => {
    if (window.matchMedia('(prefers-reduced-motion: reduce)').matches) return setTurn(1);
    const start = performance.now();
    let frame = 0;
    const tick = (now: number) => {
      const t = Math.min(1, (now - start) / kTurnMs);
      setTurn(t);
      if (t < 1) frame = requestAnimationFrame(tick);
    };
    frame = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(frame);
  }, [key, round]);
  return [turn, () => setRound((n) => n + 1)];
}
const kExtra = 12; // positions beyond the sentence the pair may be moved to

export function RopeView({ r, b, head, query, view, width }: ViewProps) {
  const t = headTensors(r, b);
  const { H, T, dK, dV } = t;
  const [base, setBase] = useState(10000);
  const [pair, setPair] = useState(0);
  const [shift, setShift] = useState(0);
  const qi = Math.min(query, T - 1);
  const kj = Math.min(view.sel.key, T - 1);
  const p = Math.min(pair, Math.max(0, dK / 2 - 1));
  const L = T + kExtra;
  const maxShift = L - 1 - Math.max(qi, kj);
  const s = Math.min(shift, maxShift);
  const rope = { base };
  const [turn, turnAgain] = useTurn(`${base}:${p}:${head}`);
  const rotated = useEngine(JSON.stringify([runKey(r), b, base]), (engine) =>
    engine.attention({ q: t.q, k: t.k, v: t.v, shape: [H, T, dK], dv: dV, rope, scale: t.scale, trace: true }),
  );
  // Query i's vector at every position and key j's at every position: score(a, c) is
  // that query at position a against that key at position c, rotated by the engine.
  const q = headBlock(t.q, head, T, dK).subarray(qi * dK, (qi + 1) * dK);
  const k = headBlock(t.k, head, T, dK).subarray(kj * dK, (kj + 1) * dK);
  const moved = useEngine(JSON.stringify([runKey(r), b, head, qi, kj, base]), (engine) => {
    const qs = new Float32Array(L * dK);
    const ks = new Float32Array(L * dK);
    for (let a = 0; a < L; a++) {
      qs.set(q, a * dK);
      ks.set(k, a * dK);
    }
    return engine.attention({ q: qs, k: ks, v: new Float32Array(L), shape: [L, dK], dv: 1, rope, scale: false, trace: true });
  });
  const theta = Math.pow(base, (-2 * p) / dK);
  const tok = t.tokens;
  const a = fitting(rotated.value, (v) => v.trace?.qRotated, [H, T, dK]);
  const m = fitting(moved.value, (v) => v.trace?.scores, [L, L]);
  const scores = m?.trace!.scores.data;
  const at = (x: number, y: number) => scores![x * L + y];
  const offset = kj - qi;
  let spread = 0;
  if (scores)
    for (let x = Math.max(0, -offset); x < L && x + offset < L; x++)
      spread = Math.max(spread, Math.abs(at(x, x + offset) - at(qi, kj)));
  const range = scores ? Math.max(...Array.from(scores, Math.abs)) : 1;
  const color = colorScale('signed', range);
  const boxes: GridBox[] = [];
  for (let x = Math.max(0, -offset); x < L && x + offset < L; x++) boxes.push({ i0: x, j0: x + offset, rows: 1, cols: 1, cls: 'band' });
  boxes.push({ i0: qi + s, j0: kj + s, rows: 1, cols: 1, cls: 'now' });
  const posLabels = Array.from({ length: L }, (_, x) => `pos ${x}`);
  return (
    <div class="modern" data-modern="rope" data-engine={readiness(rotated, moved)}>
      <ClipNote t={t} />
      <p class="explain">
        Llama, Mistral, Qwen and most models since 2023 add no position vector to the tokens. Instead RoPE turns each
        pair of components (p, p + d/2) of a query and a key by an angle proportional to the token’s position,
        position × θ_p with θ_p = base^(−2p/d). A dot product of two turned vectors depends only on the difference of
        their angles, so the score of a query and a key depends on how far apart they are, not on where they are.
      </p>
      <div class="modern-controls">
        <Pick id="rope-base" label="base" value={base} set={setBase} options={kBases.map((n) => ({ value: n, text: n.toLocaleString('en') }))} />
        <Pick id="rope-pair" label="pair" value={p} set={setPair}
          options={Array.from({ length: Math.max(1, dK / 2) }, (_, x) => ({ value: x, text: `p = ${x}: components ${x + 1} and ${x + 1 + dK / 2}` }))} />
        <span>{`θ_${p} = ${fmt(theta, 5)} rad per position`}</span>
        <button type="button" class="small" id="rope-turn" onClick={turnAgain}>
          turn again
        </button>
      </div>
      {rotated.error && <p class="error-text">{`The engine rejected RoPE here: ${rotated.error}`}</p>}
      {a && (
        <figure class="matrix">
          <figcaption>
            <strong>{`Pair ${p} of each token’s query and key, head ${head + 1}`}</strong>
            {' · dashed: before, solid: after the engine’s rotation (trace.qRotated, trace.kRotated); orange query, purple key; the arc is the angle position × θ.'}
          </figcaption>
          <RopeDials tokens={tok} p={p} d={dK} theta={theta} q={headBlock(t.q, head, T, dK)} k={headBlock(t.k, head, T, dK)}
            qRot={headBlock(a.trace!.qRotated!.data, head, T, dK)} kRot={headBlock(a.trace!.kRotated!.data, head, T, dK)}
            turn={turn} width={Math.min(width, 900)} />
        </figure>
      )}
      <h3 class="modern-h">Move both tokens: the score stays</h3>
      <p class="explain">
        {`The query of “${tok[qi]}” (token ${qi}, the focused query) and the key of “${tok[kj]}” (token ${kj}, the inspected key; click a cell of the heatmap to choose others). The engine is given that query at each of ${L} positions and that key at each of ${L} positions and returns every score (unscaled, after rotation): row a is the query at position a, column c the key at position c.`}
      </p>
      <div class="modern-controls">
        <Slider id="rope-shift" label="move both by" min={0} max={maxShift} value={s} set={setShift} />
      </div>
      {moved.error && <p class="error-text">{`The engine rejected this: ${moved.error}`}</p>}
      {scores && (
        <>
          <p class="rope-scores" id="rope-scores" data-at={at(qi, kj)} data-moved={at(qi + s, kj + s)} data-spread={spread}>
            {`At positions (${qi}, ${kj}): score ${full(at(qi, kj))}. Moved by ${s} to (${qi + s}, ${kj + s}): ${full(at(qi + s, kj + s))}. Largest difference along the whole diagonal (distance ${offset}): ${fmt(spread, 3)} (float32 rounding). Without rotation the score would be the same everywhere; with it, other distances give other scores.`}
          </p>
          <p class="legend-line">
            <Swatch kind="band">{`same distance ${offset}`}</Swatch>
            <Swatch kind="now">{`moved by ${s}`}</Swatch>
            <span>{`purple −${fmt(range, 2)} … orange ${fmt(range, 2)}`}</span>
          </p>
          <div class="scroll">
            <CellGrid id="rope-moved" label={`Scores of one query against one key at every pair of positions, ${L} by ${L}; each diagonal holds one value`}
              rows={L} cols={L} rowLabels={posLabels} colLabels={posLabels} width={Math.min(width, 620)} boxes={boxes}
              cell={(x, y) => ({ fill: color(at(x, y)), text: `query at ${x}, key at ${y}: ${full(at(x, y))}` })} />
          </div>
        </>
      )}
    </div>
  );
}
