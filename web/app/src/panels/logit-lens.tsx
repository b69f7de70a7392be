// The logit lens of the loaded GPT-2 (with the visitor's interventions): for every layer
// and position the token the model would predict if the residual stream stopped there
// (through ln_f and the tied embedding), with its probability. The last row is the
// model's own prediction. Computed only while the panel is open: it decodes every layer
// through the whole vocabulary.
import { analysis, lensOpen } from '../gpt2/analysis-state';
import { tokenText, visiblePiece } from '../gpt2/tokens';
import { run } from '../store';

function Table() {
  const g = run.value!.result.gpt2!;
  const a = analysis.value;
  const lens = a && a.tokens.join() === g.tokens.join() ? a.reply.lens : null;
  if (!lens) return <p class="hint">Computing…</p>;
  const T = g.tokens.length;
  return (
    <div class="lens-scroll" tabIndex={0} role="region" aria-label="Logit lens table">
      <table id="logit-lens">
        <thead>
          <tr>
            <th scope="col">after</th>
            {g.texts.map((t) => <th scope="col">{visiblePiece(t)}</th>)}
          </tr>
        </thead>
        <tbody>
          {Array.from({ length: g.layers }, (_, l) => (
            <tr>
              <th scope="row">{`layer ${l + 1}`}</th>
              {Array.from({ length: T }, (_, t) => {
                const id = lens.ids[l * T + t];
                const p = lens.probabilities[l * T + t];
                return (
                  <td data-token={String(id)} data-p={String(p)} title={`id ${id}, ${(p * 100).toFixed(1)}%`} style={{ '--p': String(p) }}>
                    {visiblePiece(tokenText(id))}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export function LogitLens() {
  if (!run.value?.result.gpt2) return null;
  return (
    <details class="gpt2-analysis logit-lens" open={lensOpen.value} onToggle={(e) => (lensOpen.value = (e.currentTarget as HTMLDetailsElement).open)}>
      <summary id="logit-lens-h">Logit lens</summary>
      <p class="hint">The most likely next token read from the residual stream after each layer (rows) at each position (columns), through the final LayerNorm and the embedding; the last row is the model’s own prediction. Shaded by its probability.</p>
      {lensOpen.value && <Table />}
    </details>
  );
}
