// Interventions on the loaded GPT-2: ablate a head (zero or mean), mask a token from
// being attended (click its chip), replace a head's pattern by another head's. The
// worker reruns the model with them (gpt2/analysis-state.ts); shown are the next-token
// probabilities without and with the change and the change of the selected head's
// attention as a diverging map. Every number comes from the engine's forward.
import { useState } from 'preact/hooks';
import {
  analysis,
  analysisError,
  analysisSettled,
  interventions,
  fitting,
  noInterventions,
  setInterventions,
} from '../gpt2/analysis-state';
import { probabilities, topTokens } from '../gpt2/probabilities';
import { gpt2Layer } from '../gpt2/state';
import { tokenText, visiblePiece } from '../gpt2/tokens';
import { run, view } from '../store';
import { AnalysisMap } from './analysis-map';

const kTop = 5;

function NumberSelect({ id, label, count, value, onChange }: { id: string; label: string; count: number; value: number; onChange: (v: number) => void }) {
  return (
    <label>
      {`${label} `}
      <select id={id} value={String(value)} onChange={(e) => onChange(Number((e.currentTarget as HTMLSelectElement).value))}>
        {Array.from({ length: count }, (_, k) => <option value={String(k)}>{String(k + 1)}</option>)}
      </select>
    </label>
  );
}

const headName = (h: { layer: number; head: number }) => `layer ${h.layer + 1} head ${h.head + 1}`;
const same = (a: { layer: number; head: number }, b: { layer: number; head: number }) => a.layer === b.layer && a.head === b.head;

/** Drops any entry already targeting this head (a head takes one intervention). */
const freeHead = (target: { layer: number; head: number }) =>
  setInterventions((iv) => ({ ...iv, ablate: iv.ablate.filter((a) => !same(a, target)), replace: iv.replace.filter((r) => !same(r, target)) }));

export function Interventions() {
  const r = run.value?.result;
  const g = r?.gpt2;
  const [mode, setMode] = useState<'zero' | 'mean'>('zero');
  const [from, setFrom] = useState({ layer: 0, head: 0 });
  if (!r || !g) return null;
  const { H, T } = r.model;
  const layer = Math.min(gpt2Layer.value, g.layers - 1);
  const head = Math.min(view.value.sel.head, H - 1);
  const target = { layer, head };
  // Entries that no longer fit (a shorter text, another model) are not applied nor listed.
  const iv = fitting(interventions.value, T, g.layers, H);
  const a = analysis.value;
  const current = a && a.tokens.join() === g.tokens.join() && !noInterventions(a.applied) ? a : null;
  const entries = [
    ...iv.ablate.map((x) => ({ text: `ablate ${headName(x)} (${x.mode})`, drop: () => setInterventions((v) => ({ ...v, ablate: v.ablate.filter((y) => y !== x) })) })),
    ...iv.replace.map((x) => ({ text: `${headName(x)} uses the pattern of ${headName(x.from)}`, drop: () => setInterventions((v) => ({ ...v, replace: v.replace.filter((y) => y !== x) })) })),
    ...iv.maskTokens.map((p) => ({ text: `mask token ${p + 1} “${visiblePiece(g.texts[p] ?? '')}”`, drop: () => setInterventions((v) => ({ ...v, maskTokens: v.maskTokens.filter((y) => y !== p) })) })),
  ];
  const toggleMask = (p: number) =>
    setInterventions((v) => ({ ...v, maskTokens: v.maskTokens.includes(p) ? v.maskTokens.filter((y) => y !== p) : [...v.maskTokens, p].sort((x, y) => x - y) }));
  const before = current ? topTokens(g.lastLogits, kTop) : [];
  const after = current ? topTokens(current.reply.lastLogits, kTop) : [];
  const pBefore = current ? probabilities(g.lastLogits) : () => 0;
  const pAfter = current ? probabilities(current.reply.lastLogits) : () => 0;
  const shown = [...new Set([...before.map((t) => t.token), ...after.map((t) => t.token)])];
  const diff = current?.reply.diffAttentions?.[layer];
  return (
    <section class="gpt2-analysis interventions" aria-labelledby="interventions-h" data-analysed={String(analysisSettled.value)}>
      <h3 id="interventions-h">Interventions</h3>
      <p class="hint">Change the model and see what moves: the engine runs it again with your changes and reports the difference from the unchanged run.</p>
      <div class="iv-controls">
        <fieldset>
          <legend>{`Ablate ${headName(target)}`}</legend>
          <p class="hint">The head chosen in the Model view or the layer and head selectors.</p>
          <label>
            {'output '}
            <select id="iv-mode" value={mode} onChange={(e) => setMode((e.currentTarget as HTMLSelectElement).value as 'zero' | 'mean')}>
              <option value="zero">zero</option>
              <option value="mean">its mean over the tokens</option>
            </select>
          </label>{' '}
          <button type="button" id="iv-ablate" onClick={() => { freeHead(target); setInterventions((v) => ({ ...v, ablate: [...v.ablate, { ...target, mode }] })); }}>Ablate</button>
        </fieldset>
        <fieldset>
          <legend>{`Replace the pattern of ${headName(target)}`}</legend>
          <NumberSelect id="iv-from-layer" label="with layer" count={g.layers} value={Math.min(from.layer, g.layers - 1)} onChange={(l) => setFrom({ ...from, layer: l })} />{' '}
          <NumberSelect id="iv-from-head" label="head" count={H} value={Math.min(from.head, H - 1)} onChange={(h) => setFrom({ ...from, head: h })} />{' '}
          <button type="button" id="iv-replace" onClick={() => { freeHead(target); setInterventions((v) => ({ ...v, replace: [...v.replace, { ...target, from: { layer: Math.min(from.layer, g.layers - 1), head: Math.min(from.head, H - 1) } }] })); }}>Replace</button>
        </fieldset>
      </div>
      <div class="iv-mask" role="group" aria-label="Mask a token from being attended">
        <span class="hint">Mask a token (no query attends to it):</span>
        {g.texts.map((text, p) => (
          <button type="button" class="chip small" data-pos={String(p)} aria-pressed={iv.maskTokens.includes(p)} onClick={() => toggleMask(p)}>{visiblePiece(text)}</button>
        ))}
      </div>
      {entries.length > 0 ? (
        <div class="iv-active">
          <ul id="iv-list">
            {entries.map((e) => (
              <li>{e.text} <button type="button" class="small" aria-label={`Remove: ${e.text}`} onClick={e.drop}>remove</button></li>
            ))}
          </ul>
          <button type="button" id="iv-clear" class="small" onClick={() => setInterventions(() => ({ ablate: [], maskTokens: [], replace: [] }))}>Remove all</button>
        </div>
      ) : (
        <p class="hint" id="iv-none">No intervention yet: ablate a head, mask a token or replace a pattern to see what changes.</p>
      )}
      {analysisError.value && <p class="error" role="alert">{`The analysis failed: ${analysisError.value}`}</p>}
      {current && (
        <div class="iv-results">
          <table id="iv-next">
            <caption>The next token, without and with the interventions (change in percentage points)</caption>
            <thead><tr><th scope="col">token</th><th scope="col">without</th><th scope="col">with</th><th scope="col">change</th></tr></thead>
            <tbody>
              {shown.map((token) => {
                const p0 = pBefore(token);
                const p1 = pAfter(token);
                return (
                  <tr data-token={String(token)}>
                    <th scope="row" title={`id ${token}`}>{visiblePiece(tokenText(token))}</th>
                    <td class="before" data-p={String(p0)}>{`${(p0 * 100).toFixed(2)}%`}</td>
                    <td class="after" data-p={String(p1)}>{`${(p1 * 100).toFixed(2)}%`}</td>
                    <td class={p1 >= p0 ? 'up' : 'down'}>{`${p1 >= p0 ? '+' : '−'}${(Math.abs(p1 - p0) * 100).toFixed(4)}`}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {diff && <AnalysisMap id="iv-diff-map" data={diff.slice(head * T * T, (head + 1) * T * T)} T={T} kind="signed" label={`Change of ${headName(target)}’s attention weights`} />}
        </div>
      )}
    </section>
  );
}
