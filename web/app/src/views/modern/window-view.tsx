// Sliding window, attention sinks and ALiBi on the visitor's tokens: the engine runs
// attention on the page's q, k and v with the window, the sinks and the bias chosen
// here; the weights heatmap shows the visible band (hidden cells hatched) and, with
// ALiBi, the bias the engine added (trace.bias) beside the scores it was added to.
import { useState } from 'preact/hooks';
import { fmt, full } from '../../format';
import { colorScale } from '../colors';
import { indexLabels } from '../matrix';
import type { ViewProps } from '../types';
import { ClipNote } from './clip-note';
import { CellGrid, Swatch } from './cell-grid';
import { fitting, headTensors, readiness, runKey, useEngine } from './engine-call';
import { NumberField, Toggle } from './fields';

export function WindowView({ r, b, head, width }: ViewProps) {
  const t = headTensors(r, b);
  const { H, T, dK, dV } = t;
  const [causal, setCausal] = useState(true);
  const [win, setWin] = useState(Math.min(4, T));
  const [sinks, setSinks] = useState(1);
  const [alibi, setAlibi] = useState(false);
  const w = Math.min(win, T);
  const s = Math.min(sinks, T);
  const mask = { causal, ...(w > 0 ? { window: w, sinks: s } : {}) };
  const key = JSON.stringify([runKey(r), b, mask, alibi]);
  const answer = useEngine(key, (engine) =>
    engine.attention({
      q: t.q,
      k: t.k,
      v: t.v,
      shape: [H, T, dK],
      dv: dV,
      scale: t.scale,
      mask,
      ...(alibi ? { bias: 'alibi' as const } : {}),
      trace: true,
    }),
  );
  // The bias grids need an answer that has one: not the last answer, computed without ALiBi.
  const a = fitting(answer.value, (v) => (alibi ? v.trace?.bias : v.trace?.weights), [H, T, T]);
  const labels = indexLabels(t.tokens);
  const at = (data: Float32Array, i: number, j: number) => data[(head * T + i) * T + j];
  // The weights get the row to themselves; the scores and the bias share one below.
  const gridWidth = Math.min(width, 560);
  const pairWidth = width < 560 ? width : Math.floor(width / 2) - 12;
  const prob = colorScale('prob', 1);
  let visible = 0;
  if (a) for (const x of a.trace!.masked.data.subarray(head * T * T, (head + 1) * T * T)) if (x > -Infinity) visible++;
  const signedGrid = (name: 'scaled' | 'bias', title: string) => {
    const data = a!.trace![name]!.data;
    let m = 0;
    for (let i = 0; i < T * T; i++) m = Math.max(m, Math.abs(data[head * T * T + i]));
    const color = colorScale('signed', m);
    return (
      <figure class="matrix" data-grid={name}>
        <figcaption>{`${title}, head ${head + 1} (−${fmt(m, 2)} purple … ${fmt(m, 2)} orange)`}</figcaption>
        <div class="scroll">
          <CellGrid
            id={`window-${name}`}
            label={`${title} of head ${head + 1}, ${T} by ${T}`}
            rows={T}
            cols={T}
            rowLabels={labels}
            colLabels={labels}
            width={pairWidth}
            cell={(i, j) => ({ fill: color(at(data, i, j)), text: `${labels[i]} → ${labels[j]}: ${full(at(data, i, j))}` })}
          />
        </div>
      </figure>
    );
  };
  // The slope of each head, read back from the bias the engine added: −bias(h, 1, 0).
  const slopes = a?.trace?.bias && T > 1 ? Array.from({ length: H }, (_, h) => -a.trace!.bias!.data[(h * T + 1) * T]) : [];
  return (
    <div class="modern" data-modern="window" data-engine={readiness(answer)}>
      <ClipNote t={t} />
      <p class="explain">
        Mistral-style models let each token see only the last <em>W</em> tokens (a sliding window), and keep the first
        few tokens visible to everyone (attention sinks, which hold attention that has nowhere better to go). ALiBi
        (used by BLOOM and MPT) has no position vectors at all: it subtracts a per-head slope times the distance from
        every score. The engine computes these on your tokens’ queries, keys and values (head {head + 1} shown).
      </p>
      <div class="modern-controls">
        <Toggle id="window-causal" label="causal" value={causal} set={setCausal} />
        <NumberField id="window-size" label="window W (0 = none)" min={0} max={T} value={w} set={setWin} />
        <NumberField id="window-sinks" label="sinks" min={0} max={T} value={s} set={setSinks} disabled={w === 0} />
        <Toggle id="window-alibi" label="ALiBi bias" value={alibi} set={setAlibi} />
      </div>
      <p class="legend-line">
        <Swatch kind="hidden">hidden by the mask (not a small weight: the engine never scores it)</Swatch>
      </p>
      {answer.error && <p class="error-text">{`The engine rejected these settings: ${answer.error}`}</p>}
      {a && (
        <div class="figures">
          <figure class="matrix" data-grid="weights">
            <figcaption>
              <strong>{`Attention weights, head ${head + 1}`}</strong>
              {` · ${w > 0 ? `key j visible to query i if |i − j| < ${w}${s > 0 ? ` or j < ${s} (sinks)` : ''}` : 'no window'}${causal ? ', and j ≤ i' : ''}. `}
              <span id="window-visible" data-count={visible}>{`${visible} of ${T * T} cells visible.`}</span>
            </figcaption>
            <div class="scroll">
              <CellGrid
                id="window-weights"
                label={`Attention weights of head ${head + 1} with the window: ${visible} of ${T * T} cells visible, the others hatched`}
                rows={T}
                cols={T}
                rowLabels={labels}
                colLabels={labels}
                width={gridWidth}
                cell={(i, j) => {
                  const m = at(a.trace!.masked.data, i, j);
                  const v = at(a.trace!.weights.data, i, j);
                  return m === -Infinity
                    ? { fill: null, text: `${labels[i]} → ${labels[j]}: hidden` }
                    : { fill: prob(v), text: `${labels[i]} → ${labels[j]}: ${full(v)}` };
                }}
              />
            </div>
          </figure>
        </div>
      )}
      {a && alibi && (
        <div class="figures n2">
          {signedGrid('scaled', 'Scores before the bias (scaled)')}
          {signedGrid('bias', 'ALiBi bias (trace.bias)')}
        </div>
      )}
      {alibi && slopes.length > 0 && (
        <p class="explain" id="alibi-slopes">
          {`Slopes m_h, read from the engine’s bias (−bias at distance 1): `}
          {slopes.map((m, h) => (
            <span data-slope={m} class={h === head ? 'strong' : ''}>{`head ${h + 1}: ${fmt(m, 4)}${h < H - 1 ? '; ' : ''}`}</span>
          ))}
          {`. The paper’s rule: m_h = 2^(−8(h+1)/H) when H is a power of two${(H & (H - 1)) === 0 ? '' : ' (H = ' + H + ' is not: the slopes of the nearest power of two, then every other slope of the next one)'}. Far keys lose more: a head with a large slope looks near, a small slope looks far.`}
        </p>
      )}
    </div>
  );
}
