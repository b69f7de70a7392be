// Attribution for the loaded GPT-2, of the run with the visitor's interventions: the
// selected head's raw attention weights, the attention rollout up to the selected layer
// (all heads), or the value-norm weighted attention ‖α·v·W_O‖ of the selected head.
// Computed only while the panel is open.
import {
  analysis,
  attributionMode,
  attributionOpen,
  type AttributionMode,
} from '../gpt2/analysis-state';
import { gpt2Layer } from '../gpt2/state';
import { run, view } from '../store';
import { AnalysisMap } from './analysis-map';

const kModes: { id: AttributionMode; label: string }[] = [
  { id: 'raw', label: 'raw attention' },
  { id: 'rollout', label: 'rollout' },
  { id: 'valueNorms', label: 'value-norm' },
];

function Map() {
  const r = run.value!.result;
  const a = analysis.value;
  const got = a && a.tokens.join() === r.gpt2!.tokens.join() ? a.reply.attribution : null;
  if (!got) return <p class="hint">Computing…</p>;
  const { H, T } = r.model;
  const layer = Math.min(gpt2Layer.value, r.gpt2!.layers - 1);
  const head = Math.min(view.value.sel.head, H - 1);
  const slice = (all: Float32Array[]) => all[layer].slice(head * T * T, (head + 1) * T * T);
  const shown = {
    raw: { data: slice(got.attentions), label: `Layer ${layer + 1} head ${head + 1}: attention weights` },
    rollout: { data: got.rollout[layer], label: `Rollout through layers 1–${layer + 1} (heads averaged, plus the residual)` },
    valueNorms: { data: slice(got.valueNorms), label: `Layer ${layer + 1} head ${head + 1}: ‖weight · value · W_O‖` },
  }[attributionMode.value];
  return <AnalysisMap id="attribution-map" data={shown.data} T={T} kind="prob" label={shown.label} />;
}

export function Attribution() {
  if (!run.value?.result.gpt2) return null;
  const mode = attributionMode.value;
  return (
    <details class="gpt2-analysis attribution" open={attributionOpen.value} onToggle={(e) => (attributionOpen.value = (e.currentTarget as HTMLDetailsElement).open)}>
      <summary id="attribution-h">Attribution</summary>
      <div role="radiogroup" aria-labelledby="attribution-h" class="attribution-modes">
        {kModes.map((m) => (
          <label class="check">
            <input type="radio" name="attribution" value={m.id} checked={mode === m.id} onChange={() => (attributionMode.value = m.id)} /> {m.label}
          </label>
        ))}
      </div>
      <p class="hint">Of the run with your interventions. Rollout (Abnar &amp; Zuidema 2020) follows attention through the layers; value-norm (Kobayashi et al. 2020) scales each weight by the size of what that token’s value adds to the output.</p>
      {attributionOpen.value && <Map />}
    </details>
  );
}
