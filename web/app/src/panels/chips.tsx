// The tokens as chips: one keyboard stop for the whole row (roving tabindex: the
// arrow keys, Home and End move between chips), Enter or a click edits a chip.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { runAtOnce } from '../run';
import { inputs, setInputs, shownInputs } from '../store';
import { textLimitNote } from '../text-limits';
import { computedPart } from '../tokenize';

interface At {
  line: number;
  index: number;
}

function replaceToken(text: string, at: At, value: string): string | null {
  const sentence = computedPart(text).sentences[at.line];
  if (!sentence || at.index >= sentence.tokens.length) return null;
  const before = text.slice(0, sentence.start[at.index]);
  let after = text.slice(sentence.end[at.index]);
  if (value === '') after = after.replace(/^[ \t]+/, ''); // a removed word takes its space with it
  return before + value + after;
}

export function Chips() {
  const text = shownInputs.value.text;
  const part = computedPart(text);
  const lines = part.sentences.map((s) => s.tokens);
  const [focus, setFocus] = useState(0); // the chip that holds the row's one tab stop
  const [editing, setEditing] = useState<At | null>(null);
  const box = useRef<HTMLDivElement>(null);
  const count = lines.reduce((n, l) => n + l.length, 0);
  const stop = Math.min(focus, Math.max(0, count - 1));
  const focusChip = (k: number) => {
    setFocus(k);
    requestAnimationFrame(() => box.current?.querySelectorAll<HTMLElement>('.chip')[k]?.focus());
  };
  const finish = (at: At, original: string, value: string | null, flat: number) => {
    setEditing(null);
    const next = value === null || value === original ? null : replaceToken(inputs.value.text, at, value);
    if (next !== null) runAtOnce(() => setInputs({ text: next, preset: null })); // one edit: no need to wait for more
    focusChip(flat);
  };
  let flat = 0;
  return (
    <>
      <div class="chips-strip">
      {/* The instructions are read with the count; on screen a short form stands for them. */}
      <p class="hint token-count" id="token-count">{`${count} tokens${lines.length > 1 ? ` in ${lines.length} sentences (padded to the longest)` : ''}.`}
        <span class="sr-only">{' Edit a token: Tab reaches the row, arrow keys move, Enter edits; empty it to remove it.'}</span>
        <span aria-hidden="true">{' Click one to edit it.'}</span>{textLimitNote(part)}</p>
      <div id="chips" class="chips" role="group" aria-label="Tokens: press one to edit it" ref={box}
        onKeyDown={(e) => {
          const keys: Record<string, number> = { ArrowRight: 1, ArrowDown: 1, ArrowLeft: -1, ArrowUp: -1, Home: -1e9, End: 1e9 };
          if (!(e.key in keys) || (e.target as HTMLElement).tagName === 'INPUT') return;
          e.preventDefault();
          focusChip(Math.max(0, Math.min(count - 1, stop + keys[e.key])));
        }}>
        {lines.map((tokens, line) => (
          <>
            {lines.length > 1 && <span class="chip-line">{`sentence ${line + 1}:`}</span>}
            {tokens.map((tok, index) => {
              const k = flat++;
              const at = { line, index };
              if (editing?.line === line && editing.index === index)
                return <ChipEditor token={tok} index={index} done={(value) => finish(at, tok, value, k)} />;
              return <button type="button" class="chip" tabIndex={k === stop ? 0 : -1} data-line={line} data-index={index} aria-label={`token ${index + 1} of sentence ${line + 1}: ${tok}. Press to edit.`}
                onClick={() => { setFocus(k); setEditing(at); }}>{tok}</button>;
            })}
          </>
        ))}
      </div>
      </div>
    </>
  );
}

/** The field that replaces a chip while it is edited; `done(null)` cancels. */
function ChipEditor({ token, index, done }: { token: string; index: number; done: (value: string | null) => void }) {
  const ref = useRef<HTMLInputElement>(null);
  const finished = useRef(false);
  const end = (value: string | null) => {
    if (finished.current) return;
    finished.current = true;
    done(value);
  };
  useLayoutEffect(() => {
    ref.current!.value = token;
    ref.current!.focus();
    ref.current!.select();
  }, []);
  return <input ref={ref} class="chip editing" spellcheck={false} aria-label={`edit token ${index + 1}; Enter to apply, Escape to cancel`}
    onKeyDown={(e) => { if (e.key === 'Enter') end(e.currentTarget.value); else if (e.key === 'Escape') end(null); }}
    onBlur={(e) => end(e.currentTarget.value)} />;
}
