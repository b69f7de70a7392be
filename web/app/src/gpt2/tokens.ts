// The loaded model's byte-level BPE through the package, fetched only once a model is:
// GPT-2's (attnscope/tokenizer) or the shipped KJV model's (attnscope/bpe-tokenizer).
// Tokens are shown as the visitor's own text: a character split over tokens appears on
// the token that completes it, and spaces and line breaks are drawn visibly.
// A model trained on the page carries its own small vocabulary, used instead.
import type { TokenPiece } from 'attnscope/tokenizer';
import { kjvTokenizerUrl } from './kjv';
import { loadedGpt2 } from './state';

export type TokenizerName = 'gpt2' | 'kjv';
export interface Tokenizer {
  encode(text: string): number[];
  decode(ids: ArrayLike<number>): string;
  pieces(text: string): TokenPiece[];
}

const fetched = new Map<TokenizerName, Promise<Tokenizer>>();
let tokenizer: Tokenizer | null = null;

async function fetchTokenizer(name: TokenizerName): Promise<Tokenizer> {
  if (name === 'gpt2') return (await import('attnscope/tokenizer')).gpt2Tokenizer;
  const [{ bpeTokenizer }, response] = await Promise.all([
    import('attnscope/bpe-tokenizer'),
    fetch(kjvTokenizerUrl),
  ]);
  if (!response.ok) throw new Error(`the tokenizer could not be fetched (HTTP ${response.status})`);
  return bpeTokenizer(await response.json());
}

/** The tokenizer `name`, fetched once; useTokenizer makes it the one the page encodes with. */
export function loadTokenizer(name: TokenizerName): Promise<Tokenizer> {
  let pending = fetched.get(name);
  if (!pending) {
    pending = fetchTokenizer(name);
    pending.catch(() => fetched.delete(name)); // a failed fetch may be tried again
    fetched.set(name, pending);
  }
  return pending;
}

export function useTokenizer(next: Tokenizer): void {
  tokenizer = next;
}

function loaded(): Tokenizer {
  if (!tokenizer) throw new Error('no tokenizer is loaded');
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
