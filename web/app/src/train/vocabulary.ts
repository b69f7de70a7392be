// The small vocabularies of the trained models: single symbols (letters and marks; the
// text is read character by character and spaces are skipped) or words (a word or mark
// with the spaces before it, numbered in the order they first appear in the text; id 0
// stands for any other). A model's vocabulary travels in its .safetensors file's
// __metadata__, so a downloaded model reads text the same way when it is loaded again.

export type VocabularyKind = 'symbols' | 'words';

export interface Vocabulary {
  kind: VocabularyKind;
  tokens: string[];
  /** The text's tokens with each one's own text (unknown symbols are skipped). */
  encode(text: string): { ids: number[]; texts: string[] };
  decode(ids: number[]): string;
}

export const kUnknownWord = '<unk>';
const kWordPattern = /\s*(?:[\p{L}\p{N}'’]+|[^\s\p{L}\p{N}])/gu;
const kMaxWords = 1024;

function vocabulary(kind: VocabularyKind, tokens: string[]): Vocabulary {
  const index = new Map(tokens.map((t, i) => [t, i]));
  const decode = (ids: number[]) => ids.map((id) => tokens[id] ?? '').join('');
  if (kind === 'symbols') {
    return {
      kind,
      tokens,
      decode,
      encode(text) {
        const ids: number[] = [];
        for (const ch of text) {
          const id = index.get(ch);
          if (id !== undefined) ids.push(id);
        }
        return { ids, texts: ids.map((id) => tokens[id]!) };
      },
    };
  }
  return {
    kind,
    tokens,
    decode,
    encode(text) {
      const pieces = text.match(kWordPattern) ?? [];
      const ids = pieces.map((p) => {
        const word = p.trimStart();
        return index.get(p) ?? index.get(` ${word}`) ?? index.get(word) ?? 0;
      });
      return { ids, texts: pieces };
    },
  };
}

export const symbolVocabulary = (symbols: string[]): Vocabulary => vocabulary('symbols', symbols);

/** The words of `text` (at most 1024 different ones; later new words read as <unk>). */
export function wordVocabulary(text: string): Vocabulary {
  const tokens = [kUnknownWord];
  const seen = new Set(tokens);
  for (const piece of text.match(kWordPattern) ?? []) {
    if (tokens.length >= kMaxWords) break;
    if (!seen.has(piece)) {
      seen.add(piece);
      tokens.push(piece);
    }
  }
  return vocabulary('words', tokens);
}

const kMetadataKey = 'attnscope_vocabulary';

/** The vocabulary as a __metadata__ value. */
export const vocabularyMetadata = (v: Vocabulary) =>
  JSON.stringify({ kind: v.kind, tokens: v.tokens });

/** The vocabulary of a file's __metadata__ value, or null if it holds none that is valid. */
export function vocabularyFromMetadata(metadata: Record<string, unknown>): Vocabulary | null {
  const value = metadata[kMetadataKey];
  if (typeof value !== 'string') return null;
  try {
    const parsed = JSON.parse(value) as { kind?: unknown; tokens?: unknown };
    const { kind, tokens } = parsed;
    if (kind !== 'symbols' && kind !== 'words') return null;
    if (!Array.isArray(tokens) || !tokens.every((t) => typeof t === 'string')) return null;
    return vocabulary(kind, tokens as string[]);
  } catch {
    return null;
  }
}

export { kMetadataKey as kVocabularyMetadataKey };
