// The flash tiles: the fast path's tile walk replayed on the current input, step by
// step (the pipeline's player), ending with the weights recovered from log-sum-exp and
// compared with the engine's traced weights.
import { useState } from 'preact/hooks';
import { fmt, full } from '../../format';
import { Player } from '../../player';
import { colorScale } from '../colors';
import { indexLabels } from '../matrix';
import type { ViewProps } from '../types';
import { ClipNote } from './clip-note';
import { CellGrid, Swatch, type GridBox } from './cell-grid';
import { fitting, headTensors, maxAbsDiff, readiness, runKey, useEngine } from './engine-call';
import { NumberField, Pick, Toggle } from './fields';
import { flashWalk, recoveredWeights, type FlashWalk } from './flash-walk';

const kMaxRows = 64;

/** m and l of every query row after step `at` (and, at the end, the log-sum-exp m + ln l). */
function RunningRows(p: { walk: FlashWalk; at: number; labels: string[]; done: boolean; tileRows: number[] }) {
  const m = p.walk.m[p.at];
  const l = p.walk.l[p.at];
  const rows = Math.min(m.length, kMaxRows);
  return (
    <div class="modern-table" tabIndex={0} role="region" aria-label="Running max and sum of every query row">
      <table class="num-table" id="flash-running">
        <caption>{p.done ? 'Every row at the end: m, l and the log-sum-exp' : 'Every row so far: running max m and sum l'}</caption>
        <thead>
          <tr><th scope="col">query</th><th scope="col">m</th><th scope="col">l</th>{p.done && <th scope="col">m + ln l</th>}</tr>
        </thead>
        <tbody>
          {Array.from({ length: rows }, (_, i) => (
            <tr class={p.tileRows.includes(i) ? 'in-tile' : ''}>
              <th scope="row">{p.labels[i]}</th><td>{fmt(m[i], 3)}</td><td>{fmt(l[i], 3)}</td>
              {p.done && <td data-lse={m[i] + Math.log(l[i])}>{fmt(m[i] + Math.log(l[i]), 4)}</td>}
            </tr>
          ))}
        </tbody>
      </table>
      {rows < m.length && <p class="note">{`The first ${rows} of ${m.length} rows.`}</p>}
    </div>
  );
}

export function FlashView({ r, b, head, width }: ViewProps) {
  const t = headTensors(r, b);
  const { H, T, dK, dV } = t;
  const [tile, setTile] = useState(4);
  const [causal, setCausal] = useState(true);
  const [win, setWin] = useState(0);
  const [at, setAt] = useState(0);
  const w = Math.min(win, T);
  const mask = { causal, ...(w > 0 ? { window: w } : {}) };
  const answer = useEngine(JSON.stringify([runKey(r), b, mask]), async (engine) => {
    const args = { q: t.q, k: t.k, v: t.v, shape: [H, T, dK], dv: dV, scale: t.scale, mask };
    const traced = await engine.attention({ ...args, trace: true });
    const fast = await engine.attention({ ...args, trace: false });
    return { traced, fastDiff: maxAbsDiff(fast.output.data, traced.output.data) };
  });
  const a = fitting(answer.value, (v) => v.traced.trace?.weights, [H, T, T]);
  const labels = indexLabels(t.tokens);
  if (!a)
    return (
      <div class="modern" data-modern="flash" data-engine={readiness(answer)}>
      <ClipNote t={t} />
        {answer.error ? <p class="error-text">{`The engine rejected this: ${answer.error}`}</p> : <p>Computing…</p>}
      </div>
    );
  const scores = a.traced.trace!.masked.data.subarray(head * T * T, (head + 1) * T * T);
  const engineWeights = a.traced.trace!.weights.data.subarray(head * T * T, (head + 1) * T * T);
  const walk = flashWalk(scores, T, tile);
  const frames = walk.steps.length + 1; // the last frame: the weights recovered
  const k = Math.min(at, frames - 1);
  const done = k === walk.steps.length;
  const visited = (i: number, j: number) => {
    const idx = Math.floor(i / tile) * walk.tiles + Math.floor(j / tile);
    return idx <= k;
  };
  const skippedTile = (i: number, j: number) => walk.steps[Math.floor(i / tile) * walk.tiles + Math.floor(j / tile)].skipped;
  let range = 0;
  for (const s of scores) if (s > -Infinity) range = Math.max(range, Math.abs(s));
  const signed = colorScale('signed', range);
  const prob = colorScale('prob', 1);
  const recovered = recoveredWeights(scores, T, walk);
  const diff = maxAbsDiff(recovered, engineWeights);
  const boxes: GridBox[] = walk.steps.map((st, n) => ({
    i0: st.ti * tile, j0: st.tj * tile, rows: Math.min(tile, T - st.ti * tile), cols: Math.min(tile, T - st.tj * tile),
    cls: n === k ? 'now' : 'done',
  }));
  const step = done ? null : walk.steps[k];
  const skippedCount = walk.steps.filter((s) => s.skipped).length;
  const gridW = Math.min(width, 560);
  return (
    <div class="modern" data-modern="flash" data-engine={readiness(answer)}>
      <ClipNote t={t} />
      <p class="explain">
        The fast path never holds the T × T weights. It walks the scores in tiles, keeping for each query row only a
        running max m and a running sum l of exp(s − m); when a tile brings a larger max, everything summed so far is
        multiplied by exp(m_old − m_new). At the end m + ln l is the row’s log-sum-exp, and any weight is
        exp(s − (m + ln l)): the weights are not lost, only never stored. The walk below is replayed in the page on
        the engine’s scores for head {head + 1}; the weights it recovers are compared with the engine’s traced weights.
      </p>
      <div class="modern-controls">
        <Pick id="flash-tile" label="tile" value={tile} set={(v) => { setTile(v); setAt(0); }} options={[2, 3, 4, 8].map((n) => ({ value: n, text: `${n} × ${n}` }))} />
        <Toggle id="flash-causal" label="causal" value={causal} set={(v) => { setCausal(v); setAt(0); }} />
        <NumberField id="flash-window" label="window (0 = none)" min={0} max={T} value={w} set={(v) => { setWin(v); setAt(0); }} />
      </div>
      <Player name="tiles" frames={frames} index={k} go={setAt}
        describe={(i) => (i === walk.steps.length ? 'Done: weights from the log-sum-exp' : `Tile ${i + 1} of ${walk.steps.length}${walk.steps[i].skipped ? ' (skipped)' : ''}`)} />
      <p class="legend-line">
        <Swatch kind="now">this tile</Swatch>
        <Swatch kind="hidden">{`skipped: every cell masked (${skippedCount} of ${walk.steps.length} tiles)`}</Swatch>
        <span>{done ? 'weights 0 (dark) … 1 (yellow)' : `scores −${fmt(range, 2)} purple … ${fmt(range, 2)} orange`}</span>
      </p>
      <div class="figures">
        <figure class="matrix">
          <figcaption>{done ? 'Weights recovered from m + ln l' : `Scores, tiles visited so far (tile ${k + 1})`}</figcaption>
          <div class="scroll">
            <CellGrid id="flash-grid" label={done ? 'Weights recovered from the log-sum-exp' : `Score matrix in ${tile} by ${tile} tiles, ${k + 1} visited`}
              rows={T} cols={T} rowLabels={labels} colLabels={labels} width={gridW} boxes={done ? [] : boxes}
              cell={(i, j) => {
                if (skippedTile(i, j) || scores[i * T + j] === -Infinity) return { fill: null, text: `${labels[i]} → ${labels[j]}: masked` };
                if (done) return { fill: prob(recovered[i * T + j]), text: `${labels[i]} → ${labels[j]}: ${full(recovered[i * T + j])}` };
                return visited(i, j) ? { fill: signed(scores[i * T + j]), text: `${labels[i]} → ${labels[j]}: ${full(scores[i * T + j])}` } : { fill: 'transparent' };
              }} />
          </div>
        </figure>
        <div class="flash-rows">
          {step && step.skipped && <p>{`Tile (${step.ti + 1}, ${step.tj + 1}) is skipped: the mask hides every cell, so it is never loaded.`}</p>}
          {step && !step.skipped && (
            <div class="modern-table" tabIndex={0} role="region" aria-label="The running max and sum of this tile’s rows"><table class="num-table" id="flash-rows">
              <caption>{`Tile (${step.ti + 1}, ${step.tj + 1}): keys ${step.tj * tile + 1}–${Math.min(T, (step.tj + 1) * tile)}`}</caption>
              <thead><tr><th scope="col">query</th><th scope="col">m before</th><th scope="col">m after</th><th scope="col">rescale</th><th scope="col">l after</th></tr></thead>
              <tbody>
                {step.rows.map((u) => (
                  <tr class={u.factor < 1 && u.mBefore > -Infinity ? 'jumped' : ''}>
                    <th scope="row">{labels[u.row]}</th><td>{fmt(u.mBefore, 3)}</td><td>{fmt(u.mAfter, 3)}</td>
                    <td>{u.mBefore === -Infinity ? 'first' : u.factor < 1 ? `× ${fmt(u.factor, 3)}` : '× 1'}</td><td>{fmt(u.lAfter, 3)}</td>
                  </tr>
                ))}
              </tbody>
            </table></div>
          )}
          {step && !step.skipped && <p class="note">Highlighted rows: the max jumped, so the old sum was rescaled.</p>}
          <RunningRows walk={walk} at={Math.min(k, walk.steps.length - 1)} labels={labels} done={done} tileRows={step && !step.skipped ? step.rows.map((u) => u.row) : []} />
          {done && (
            <p id="flash-check" data-max-diff={diff} data-fast-diff={a.fastDiff}>
              <span class={diff <= 1e-5 ? 'check-ok' : 'check-bad'}>{diff <= 1e-5 ? '✓ ' : '✗ '}</span>
              {`exp(s − (m + ln l)) equals the engine’s traced weights of head ${head + 1}: largest difference ${fmt(diff, 3)}. The engine’s own fast path (trace off) gives outputs within ${fmt(a.fastDiff, 3)} of its traced path, all ${H} heads.`}
            </p>
          )}
        </div>
      </div>
    </div>
  );
}
