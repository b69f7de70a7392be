// The logit lens of the loaded GPT-2 (with the visitor's interventions): for every layer
// and position the token the model would predict if the residual stream stopped there
// (through ln_f and the tied embedding), with its probability. The last row is the
// model's own prediction.
import { analysis } from '../gpt2/analysis-state';
import { tokenText, visiblePiece } from '../gpt2/tokens';
import { run } from '../store';

export function LogitLens() {
  const g = run.value?.result.gpt2;
  const a = analysis.value;
  if (!g || !a || a.tokens.join() !== g.tokens.join()) return null;
  const T = g.tokens.length;
  const { lensIds, lensProbabilities } = a.reply;
  return (
    <section class="gpt2-analysis logit-lens" aria-labelledby="logit-lens-h">
      <h3 id="logit-lens-h">Logit lens</h3>
      <p class="hint">The most likely next token read from the residual stream after each layer (rows) at each position (columns).</p>
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
                  const id = lensIds[l * T + t];
                  const p = lensProbabilities[l * T + t];
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
    </section>
  );
}
