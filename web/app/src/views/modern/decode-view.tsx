// KV-cache decoding, step by step through the visitor's sentence: the new query row,
// the cached keys and values growing by one row a step, the cost with and without the
// cache, and each step's output (the engine, Tq = 1 against the cache) checked against
// the same row of the full causal run.
import { useState } from 'preact/hooks';
import { fmt, full } from '../../format';
import { modelWidth } from '../../gpt2/run';
import { Player } from '../../player';
import { colorScale } from '../colors';
import { indexLabels } from '../matrix';
import type { ViewProps } from '../types';
import { ClipNote } from './clip-note';
import { CellGrid, Swatch, cellsFitting, gridGeometry, gridWidthFor } from './cell-grid';
import { decodeCost, decodeSteps } from './decode-steps';
import { headBlock, headTensors, readiness, runKey, useEngine } from './engine-call';

const dims = (n: number, name: string) => Array.from({ length: n }, (_, x) => `${name}${x + 1}`);

/**
 * The cell size of the query and the cached keys and values: the other figures' size,
 * raised to 12 px (room for every row's label) where the view is wide enough, and
 * lowered (to 5 px at least, as in every grid) so that a long text's cache is about
 * 420 px high at its last step, its new row in sight. The same at every step, so the
 * grid only grows by a row. The query's cells are as wide as the keys' it meets.
 */
function cacheCell(width: number, d: number, T: number): number {
  const usual = gridGeometry(d, Math.min(width, 360)).size;
  return Math.max(5, Math.min(Math.max(12, usual), cellsFitting(d, width), Math.floor(420 / T)));
}

export function DecodeView({ r, b, head, width }: ViewProps) {
  const t = headTensors(r, b);
  const { H, T, dK, dV } = t;
  const C = modelWidth(r);
  const [at, setAt] = useState(3); // opens a few tokens in, with something in the cache
  const answer = useEngine(JSON.stringify([runKey(r), b]), (engine) => decodeSteps(engine, t));
  const steps = answer.value?.length === T ? answer.value : null; // a stale answer for another sentence is not drawn
  const s = Math.min(at, T - 1);
  const n = s + 1;
  const labels = indexLabels(t.tokens);
  const K = headBlock(t.k, head, T, dK);
  const V = headBlock(t.v, head, T, dV);
  const Q = headBlock(t.q, head, T, dK);
  let range = 0;
  for (const m of [K, V, Q]) for (const x of m) range = Math.max(range, Math.abs(x));
  const signed = colorScale('signed', range);
  const prob = colorScale('prob', 1);
  const cost = decodeCost({ n, C, H, dK, dV });
  let totalCached = 0;
  let totalRecomputed = 0;
  for (let k = 1; k <= n; k++) {
    const c = decodeCost({ n: k, C, H, dK, dV });
    totalCached += c.cached;
    totalRecomputed += c.recomputed;
  }
  const worst = steps ? Math.max(...steps.map((x) => x.maxDiff)) : 0;
  const step = steps?.[s];
  const gridW = Math.min(width, 360);
  const widest = Math.max(dK, dV);
  const vectorW = gridWidthFor(widest, cacheCell(width, widest, T));
  const cache = (m: Float32Array, d: number, name: string) => (
    <figure class="matrix" data-cache={name}>
      <figcaption>{`${name === 'K' ? 'Keys' : 'Values'} in the cache, head ${head + 1}: ${n} row${n > 1 ? 's' : ''} (${n * d * 4} bytes)`}</figcaption>
      <CellGrid
        id={`decode-${name}`}
        label={`Cached ${name === 'K' ? 'keys' : 'values'} of head ${head + 1}: ${s} rows reused, row ${n} new`}
        rows={n}
        cols={d}
        rowLabels={labels.slice(0, n)}
        colLabels={dims(d, name.toLowerCase())}
        width={vectorW}
        boxes={[{ i0: s, j0: 0, rows: 1, cols: d, cls: 'now' }]}
        keepRowLabel={s}
        cell={(i, j) => ({
          fill: signed(m[i * d + j]),
          text: `${labels[i]}, ${name.toLowerCase()}${j + 1}: ${full(m[i * d + j])}`,
        })}
      />
    </figure>
  );
  return (
    <div class="modern" data-modern="decode" data-engine={readiness(answer)}>
      <ClipNote t={t} />
      <p class="explain">
        A model writes one token at a time. Each new token needs its own query, key and value, but
        the keys and values of the earlier tokens do not change (a token never looks ahead), so they
        are kept: the KV cache. A step is one query row against every cached row. Here every step is
        computed by the engine with Tq = 1 and kvShape = [H, n, d], and compared with the same row
        of one causal run over the whole sentence.
      </p>
      <Player
        name="decoding"
        frames={T}
        index={s}
        go={setAt}
        describe={(i) => `Step ${i + 1} of ${T}: “${t.tokens[i]}”`}
      />
      {answer.error && <p class="error-text">{`The engine rejected this: ${answer.error}`}</p>}
      <p class="explain" id="decode-step">
        <strong>{`Step ${n}: “${t.tokens[s]}” arrives.`}</strong>
        {` Computed now: its query, key and value (one row each per head). Reused from the cache: ${s} key and ${s} value row${s === 1 ? '' : 's'} per head.`}
      </p>
      <p class="legend-line">
        <Swatch kind="now">computed this step</Swatch>
        <span>other rows: read from the cache</span>
      </p>
      <div class="figures">
        <figure class="matrix">
          <figcaption>{`The new query, head ${head + 1}`}</figcaption>
          <CellGrid
            id="decode-q"
            label={`Query of token ${n}, head ${head + 1}`}
            rows={1}
            cols={dK}
            rowLabels={[labels[s]]}
            colLabels={dims(dK, 'q')}
            width={vectorW}
            boxes={[{ i0: 0, j0: 0, rows: 1, cols: dK, cls: 'now' }]}
            cell={(_, j) => ({
              fill: signed(Q[s * dK + j]),
              text: `q${j + 1}: ${full(Q[s * dK + j])}`,
            })}
          />
        </figure>
        {cache(K, dK, 'K')}
        {step && (
          <figure class="matrix">
            <figcaption>{`Its weights over the ${n} cached keys (engine, Tq = 1)`}</figcaption>
            <CellGrid
              id="decode-w"
              label={`Weights of the new query over ${n} keys`}
              rows={1}
              cols={n}
              rowLabels={[labels[s]]}
              colLabels={labels.slice(0, n)}
              width={gridW}
              cell={(_, j) => ({
                fill: prob(step.weights[head * n + j]),
                text: `${labels[j]}: ${full(step.weights[head * n + j])}`,
              })}
            />
          </figure>
        )}
        {cache(V, dV, 'V')}
      </div>
      {step && (
        <p
          id="decode-check"
          data-step={s}
          data-max-diff={step.maxDiff}
          data-worst={worst}
          data-output={Array.from(step.output).join(',')}
        >
          <span class={step.maxDiff <= 1e-5 ? 'check-ok' : 'check-bad'}>
            {step.maxDiff <= 1e-5 ? '✓ ' : '✗ '}
          </span>
          {`Output row ${n} (all ${H} heads) from the cache step equals row ${n} of the full causal run: largest difference ${fmt(step.maxDiff, 3)}. Over all ${T} steps: ${fmt(worst, 3)}.`}
        </p>
      )}
      <div
        class="modern-table"
        tabIndex={0}
        role="region"
        aria-label="Multiply-adds with and without the cache"
      >
        <table class="num-table" id="decode-cost">
          <caption>{`Multiply-adds of this layer (d_model = ${C}, ${H} heads)`}</caption>
          <thead>
            <tr>
              <td />
              <th scope="col">{`step ${n}`}</th>
              <th scope="col">{`steps 1–${n}`}</th>
            </tr>
          </thead>
          <tbody>
            <tr>
              <th scope="row">with the cache (new token’s q, k, v + one query row)</th>
              <td data-cost={cost.cached}>{cost.cached.toLocaleString('en')}</td>
              <td>{totalCached.toLocaleString('en')}</td>
            </tr>
            <tr>
              <th scope="row">recomputing the prefix (q, k, v of all, causal attention)</th>
              <td data-cost={cost.recomputed}>{cost.recomputed.toLocaleString('en')}</td>
              <td>{totalRecomputed.toLocaleString('en')}</td>
            </tr>
            <tr>
              <th scope="row">saved</th>
              <td>{`${fmt(cost.recomputed / cost.cached, 3)}×`}</td>
              <td>{`${fmt(totalRecomputed / totalCached, 3)}×`}</td>
            </tr>
          </tbody>
        </table>
      </div>
    </div>
  );
}
