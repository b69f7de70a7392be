// Splits text into words and punctuation. Contractions such as "didn't" stay one
// word, as in the tutorials' tables.
export const kTokenPattern = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;

export const kMaxTokens = 1024;

export function tokenize(text: string): string[] {
  return (text.match(kTokenPattern) ?? []).slice(0, kMaxTokens);
}

/** Lines of the text box are the sentences of a batch (empty lines ignored). */
export function splitSentences(text: string): string[][] {
  const lines = text.split(/\r?\n/).map(tokenize).filter((t) => t.length > 0);
  return lines.length > 0 ? lines : [[]];
}

const kNoSpaceBefore = /^[.,;:!?)\]}%]$/;

/** Joins tokens back into readable text (no space before closing punctuation). */
export function joinTokens(tokens: readonly string[]): string {
  let out = '';
  for (const t of tokens) {
    if (out && !kNoSpaceBefore.test(t) && !out.endsWith('(')) out += ' ';
    out += t;
  }
  return out;
}
