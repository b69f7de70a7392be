// attnscope/tokenizer: GPT-2's byte-level BPE (the r50k_base encoding of the
// gpt-tokenizer package, which ships the vocabulary), with the text piece of
// the visitor's own input that each token stands for.
import { encode as encodeR50k } from 'gpt-tokenizer/encoding/r50k_base';
// The same table the encoding is built from: each id's text, or its bytes
// when they are not valid UTF-8 on their own.
import ranks from 'gpt-tokenizer/bpeRanks/r50k_base';

import { AttnScopeError } from './errors.js';

/** One token of a text and the part of the text it stands for. */
export interface TokenPiece {
  /** The token id. */
  id: number;
  /**
   * text.slice(start, end): the characters whose last UTF-8 byte is in this
   * token. A character split across tokens (an emoji, a CJK character) is
   * shown by the token that completes it; the tokens holding only its first
   * bytes have empty text (start === end). The pieces' texts, joined, are
   * the input exactly, leading spaces included.
   */
  text: string;
  /** UTF-16 offset in the input where the piece starts. */
  start: number;
  /** UTF-16 offset in the input just after the piece. */
  end: number;
}

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

function checkText(fn: string, text: unknown): asserts text is string {
  if (typeof text !== 'string') {
    throw new AttnScopeError(`gpt2Tokenizer.${fn}: text must be a string, got ${typeof text}`);
  }
}

function encode(text: string): number[] {
  checkText('encode', text);
  return encodeR50k(text, { disallowedSpecial: new Set() });
}

function decode(ids: ArrayLike<number>): string {
  if (typeof ids !== 'object' || ids === null || typeof ids.length !== 'number') {
    throw new AttnScopeError('gpt2Tokenizer.decode: ids must be an array of token ids');
  }
  const parts: Uint8Array[] = [];
  let length = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (!(Number.isInteger(id) && id >= 0 && id < kVocabSize)) {
      throw new AttnScopeError(
        `gpt2Tokenizer.decode: ids[${i}] = ${String(id)} is not a token id in [0, ${kVocabSize})`,
      );
    }
    parts.push(bytesOf(id));
    length += parts[parts.length - 1]!.length;
  }
  const all = new Uint8Array(length);
  let at = 0;
  for (const part of parts) {
    all.set(part, at);
    at += part.length;
  }
  // A fresh, non-streaming decode: nothing of one call carries into the next.
  return new TextDecoder('utf-8').decode(all);
}

/** UTF-8 length of the code point at text[i] (a lone surrogate is encoded as U+FFFD: 3 bytes). */
function utf8Length(code: number): number {
  if (code < 0x80) return 1;
  if (code < 0x800) return 2;
  if (code < 0x10000) return 3;
  return 4;
}

function pieces(text: string): TokenPiece[] {
  checkText('pieces', text);
  const ids = encode(text);
  const out: TokenPiece[] = [];
  let i = 0; // UTF-16 offset of the next character not yet given to a token
  let charsEnd = 0; // UTF-8 offset just after that character
  let tokensEnd = 0; // UTF-8 offset just after the current token
  const nextCharEnd = () => charsEnd + utf8Length(text.codePointAt(i)!);
  for (const id of ids) {
    tokensEnd += bytesOf(id).length;
    const start = i;
    while (i < text.length && nextCharEnd() <= tokensEnd) {
      charsEnd = nextCharEnd();
      i += text.codePointAt(i)! > 0xffff ? 2 : 1;
    }
    out.push({ id, text: text.slice(start, i), start, end: i });
  }
  if (i !== text.length || charsEnd !== tokensEnd) {
    throw new AttnScopeError(
      `gpt2Tokenizer.pieces: the tokens cover ${tokensEnd} bytes, the text ${utf8.encode(text).length}`,
    );
  }
  return out;
}

/** GPT-2's tokenizer (50257 ids; 50256 is <|endoftext|>). */
export const gpt2Tokenizer: Gpt2Tokenizer = Object.freeze({
  encode,
  decode,
  pieces,
  vocabSize: kVocabSize,
  endOfText: kEndOfText,
});
