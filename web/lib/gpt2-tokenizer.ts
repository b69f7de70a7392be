// attnscope/tokenizer: GPT-2's byte-level BPE (the r50k_base encoding of the
// gpt-tokenizer package, which ships the vocabulary), with the text piece of
// the visitor's own input that each token stands for.
import { encode as encodeR50k } from 'gpt-tokenizer/encoding/r50k_base';
// The same table the encoding is built from: each id's text, or its bytes
// when they are not valid UTF-8 on their own.
import ranks from 'gpt-tokenizer/bpeRanks/r50k_base';

import { checkText, decodeIds, piecesOf, type TokenPiece } from './token-text.js';

export type { TokenPiece };

/** GPT-2's tokenizer: text to token ids and back. */
export interface Gpt2Tokenizer {
  /** Token ids of `text`; "<|endoftext|>" written in the text is ordinary text. */
  encode(text: string): number[];
  /** The text of token ids (bytes that are not valid UTF-8 become U+FFFD). */
  decode(ids: ArrayLike<number>): string;
  /** encode(text) with each token's piece of `text`. */
  pieces(text: string): TokenPiece[];
  /** Ids are 0 to 50256. */
  vocabSize: 50257;
  /** The id of "<|endoftext|>", which GPT-2 puts between documents. */
  endOfText: 50256;
}

const kVocabSize = 50257;
const kEndOfText = 50256;
const kEndOfTextText = '<|endoftext|>';
const utf8 = new TextEncoder();

/** The bytes of each token id (built on first use). */
let tokenBytes: Uint8Array[] | undefined;
function bytesOf(id: number): Uint8Array {
  tokenBytes ??= ranks.map((entry) =>
    typeof entry === 'string' ? utf8.encode(entry) : Uint8Array.from(entry),
  );
  return id === kEndOfText ? utf8.encode(kEndOfTextText) : tokenBytes[id]!;
}

function encode(text: string): number[] {
  checkText('gpt2Tokenizer.encode', text);
  return encodeR50k(text, { disallowedSpecial: new Set() });
}

function decode(ids: ArrayLike<number>): string {
  return decodeIds('gpt2Tokenizer.decode', ids, kVocabSize, bytesOf);
}

function pieces(text: string): TokenPiece[] {
  checkText('gpt2Tokenizer.pieces', text);
  return piecesOf('gpt2Tokenizer.pieces', text, encode(text), bytesOf);
}

/** GPT-2's tokenizer (50257 ids; 50256 is <|endoftext|>). */
export const gpt2Tokenizer: Gpt2Tokenizer = Object.freeze({
  encode,
  decode,
  pieces,
  vocabSize: kVocabSize,
  endOfText: kEndOfText,
});
