// GPT-2's byte-level BPE through the package (attnscope/tokenizer), loaded only once a
// model is. Tokens are shown as the visitor's own text: a character split over tokens
// appears on the token that completes it, and spaces and line breaks are drawn visibly.
// A model trained on the page carries its own small vocabulary, used instead.
import { loadedGpt2 } from './state';

type Tokenizer = (typeof import('attnscope/tokenizer'))['gpt2Tokenizer'];
let tokenizer: Tokenizer | null = null;

export async function loadTokenizer(): Promise<void> {
  tokenizer ??= (await import('attnscope/tokenizer')).gpt2Tokenizer;
}

function loaded(): Tokenizer {
  if (!tokenizer) throw new Error('the GPT-2 tokenizer is not loaded');
  return tokenizer;
}

const own = () => loadedGpt2.value?.vocabulary;

export const encodeGpt2 = (text: string): number[] =>
  own()?.encode(text).ids ?? loaded().encode(text);
export const decodeGpt2 = (tokens: number[]): string =>
  own()?.decode(tokens) ?? loaded().decode(tokens);

/** The text's tokens, each with its piece of the text (empty for part of a character). */
export function gpt2Pieces(text: string): { ids: number[]; texts: string[] } {
  const vocabulary = own();
  if (vocabulary) return vocabulary.encode(text);
  const pieces = loaded().pieces(text);
  return { ids: pieces.map((p) => p.id), texts: pieces.map((p) => p.text) };
}

/** One token's own text, or "" when it holds only part of a character. */
export function tokenText(id: number): string {
  const text = decodeGpt2([id]);
  return text.includes('\uFFFD') ? '' : text;
}

/** A token's text with spaces, tabs and line breaks made visible; "…" for part of a character. */
export function visiblePiece(text: string): string {
  if (text === '') return '…';
  return text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥');
}
