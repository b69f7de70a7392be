// Splits text into words and punctuation. Contractions such as "didn't" stay one
// word, as in the tutorials' tables.
export const kTokenPattern = /[\p{L}\p{N}]+(?:['’][\p{L}\p{N}]+)*|[^\s\p{L}\p{N}]/gu;

/** The page computes at most kMaxSentences lines of at most kMaxTokens tokens each. */
export const kMaxTokens = 1024;
export const kMaxSentences = 16;

export function tokenize(text: string): string[] {
  return (text.match(kTokenPattern) ?? []).slice(0, kMaxTokens);
}

/** Lines of the text box are the sentences of a batch (empty lines ignored). */
export function splitSentences(text: string): string[][] {
  const lines = computedPart(text).sentences.map((s) => s.tokens);
  return lines.length > 0 ? lines : [[]];
}

export interface Sentence {
  tokens: string[];
  start: number[]; // where each token starts in the text box (character offset)
  end: number[];
}

/** What of the text box is computed: the rest stays in the box, untouched. */
export interface ComputedPart {
  sentences: Sentence[]; // at most kMaxSentences, each at most kMaxTokens tokens
  usedTokens: number;
  totalTokens: number; // in the whole text
  totalSentences: number;
  sentencesCut: boolean;
  tokensCut: boolean; // some computed sentence is longer than kMaxTokens
}

export function computedPart(text: string): ComputedPart {
  const part: ComputedPart = {
    sentences: [],
    usedTokens: 0,
    totalTokens: 0,
    totalSentences: 0,
    sentencesCut: false,
    tokensCut: false,
  };
  const line = /[^\n]*(\n|$)/g; // a \r before \n is whitespace to the tokenizer
  for (let m = line.exec(text); m && m[0].length > 0; m = line.exec(text)) {
    const offset = m.index;
    if (part.sentences.length >= kMaxSentences) {
      // Beyond the computed sentences only the counts are needed.
      const n = m[0].match(kTokenPattern)?.length ?? 0;
      if (n > 0) part.totalSentences++;
      part.totalTokens += n;
      continue;
    }
    const s: Sentence = { tokens: [], start: [], end: [] };
    let n = 0;
    for (const t of m[0].matchAll(kTokenPattern)) {
      if (n++ >= kMaxTokens) continue;
      s.tokens.push(t[0]);
      s.start.push(offset + t.index!);
      s.end.push(offset + t.index! + t[0].length);
    }
    if (n === 0) continue;
    part.totalSentences++;
    part.totalTokens += n;
    part.usedTokens += s.tokens.length;
    if (n > kMaxTokens) part.tokensCut = true;
    part.sentences.push(s);
  }
  part.sentencesCut = part.totalSentences > part.sentences.length;
  return part;
}

/** The computed sentences as text (one per line): what a link must hold to show the same result. */
export function computedText(text: string, part: ComputedPart = computedPart(text)): string {
  return part.sentences.map((s) => text.slice(s.start[0], s.end[s.end.length - 1])).join('\n');
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
