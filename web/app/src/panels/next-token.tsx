// What the loaded GPT-2 predicts after the last token: the ten most likely next tokens
// (softmax of the engine's logits, here), and generation one token per click through
// model.generate (greedy, or sampled with a seed).
import { signal } from '@preact/signals';
import { generateGpt2 } from '../gpt2/client';
import { topTokens } from '../gpt2/probabilities';
import { loadedGpt2 } from '../gpt2/state';
import { decodeGpt2, tokenText, visiblePiece } from '../gpt2/tokens';
import { runAtOnce } from '../run';
import { run, setInputs } from '../store';

const kTop = 10;
const sampling = signal(false);
const seed = signal(1);
const busy = signal<string | null>(null);

async function addToken(tokens: number[]): Promise<void> {
  busy.value = null;
  try {
    // The seed goes with the prompt's length, so each click draws afresh and a replay is the same.
    const next = await generateGpt2(tokens, sampling.value ? 1 : 0, sampling.value ? 40 : 0, seed.value + tokens.length);
    const text = decodeGpt2([...tokens, next]);
    runAtOnce(() => setInputs({ text, preset: null }));
  } catch (e) {
    busy.value = e instanceof Error ? e.message : String(e);
  }
}

export function NextToken() {
  const g = run.value?.result.gpt2;
  if (!g) return null;
  const top = topTokens(g.lastLogits, kTop);
  const texts = top.map((t) => tokenText(t.token));
  const full = g.cut > 0 || g.tokens.length >= (loadedGpt2.value?.config.contextLength ?? 0); // no room left
  const last = visiblePiece(g.texts[g.texts.length - 1]);
  return (
    <section class="next-token" aria-labelledby="next-token-h">
      <h3 id="next-token-h">Next token</h3>
      <p class="hint">{`The model’s probabilities for the token after “${last}” (softmax of its logits; the ten most likely):`}</p>
      <table id="next-tokens">
        <thead>
          <tr>
            <th scope="col">token</th>
            <th scope="col">probability</th>
          </tr>
        </thead>
        <tbody>
          {top.map((t, k) => (
            <tr data-token={String(t.token)}>
              <th scope="row" title={`id ${t.token}`}>{visiblePiece(texts[k])}</th>
              <td>
                <span class="prob-bar" style={{ width: `${(t.p * 100).toFixed(1)}%` }} />
                <span class="prob" data-p={String(t.p)}>{`${(t.p * 100).toFixed(2)}%`}</span>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <div class="generate">
        <label class="check">
          <input type="checkbox" id="gen-sample" checked={sampling.value} onChange={(e) => (sampling.value = (e.currentTarget as HTMLInputElement).checked)} />{' '}
          sample (temperature 1, top 40)
        </label>
        <label>
          seed{' '}
          <input type="number" id="gen-seed" min="0" max="4294967295" value={String(seed.value)} disabled={!sampling.value}
            onChange={(e) => (seed.value = Math.max(0, Math.floor(Number((e.currentTarget as HTMLInputElement).value) || 0)))} />
        </label>
        <button type="button" id="gen-step" disabled={full} onClick={() => void addToken(g.tokens)}>
          {sampling.value ? 'Add a sampled token' : 'Add the most likely token'}
        </button>
      </div>
      {busy.value && <p class="error" role="alert">{`Generation failed: ${busy.value}`}</p>}
      <p class="hint">{full ? 'The text fills the model’s context: no token can be added.' : 'The token is added to your text; the page then computes again.'}</p>
    </section>
  );
}
