// The tokens the loaded model reads from the visitor's text: its byte-level BPE pieces, each shown
// as the text it stands for (spaces as ␣, line breaks as ↵), with its id on hover, and a
// legend of the symbols the strip uses.
import { visiblePiece } from '../gpt2/tokens';
import { run } from '../store';

/** What the strip's symbols stand for: the space always, the others when they appear. */
function legend(texts: string[]): string {
  const keys = ['␣: a space'];
  if (texts.some((t) => t.includes('\n'))) keys.push('↵: a line break');
  if (texts.some((t) => t.includes('\t'))) keys.push('⇥: a tab');
  if (texts.includes('')) keys.push('…: the first bytes of a character the next token completes');
  return keys.join('; ');
}

export function Gpt2Tokens() {
  const g = run.value?.result.gpt2;
  if (!g) return null;
  return (
    <div class="gpt2-tokens">
      <p class="hint" id="gpt2-token-count">
        {`The model reads ${g.tokens.length} token${g.tokens.length === 1 ? '' : 's'} (${legend(g.texts)}):`}
      </p>
      {/* Focusable: on a phone the strip is one line that scrolls. */}
      <ol class="token-strip" aria-labelledby="gpt2-token-count" tabIndex={0}>
        {g.texts.map((text, i) => (
          <li
            title={`token ${i + 1}: id ${g.tokens[i]}${text === '' ? ', part of a character' : ''}`}
          >
            {visiblePiece(text)}
          </li>
        ))}
      </ol>
    </div>
  );
}
