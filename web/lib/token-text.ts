// What every byte-level tokenizer of the package shares: token ids back to
// text, and the piece of the input each token stands for, given the bytes
// of each token id. No vocabulary is imported here.
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

const utf8 = new TextEncoder();

/** Throws AttnScopeError naming `fn` unless `text` is a string. */
export function checkText(fn: string, text: unknown): asserts text is string {
  if (typeof text !== 'string') {
    throw new AttnScopeError(`${fn}: text must be a string, got ${typeof text}`);
  }
}

/** The text of `ids` (bytes that are not valid UTF-8 become U+FFFD). */
export function decodeIds(
  fn: string,
  ids: ArrayLike<number>,
  vocabSize: number,
  bytesOf: (id: number) => Uint8Array,
): string {
  if (typeof ids !== 'object' || ids === null || typeof ids.length !== 'number') {
    throw new AttnScopeError(`${fn}: ids must be an array of token ids`);
  }
  const parts: Uint8Array[] = [];
  let length = 0;
  for (let i = 0; i < ids.length; i++) {
    const id = ids[i]!;
    if (!(Number.isInteger(id) && id >= 0 && id < vocabSize)) {
      throw new AttnScopeError(
        `${fn}: ids[${i}] = ${String(id)} is not a token id in [0, ${vocabSize})`,
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

/** `ids` (the encoding of `text`) with the piece of `text` each stands for. */
export function piecesOf(
  fn: string,
  text: string,
  ids: number[],
  bytesOf: (id: number) => Uint8Array,
): TokenPiece[] {
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
      `${fn}: the tokens cover ${tokensEnd} bytes, the text ${utf8.encode(text).length}`,
    );
  }
  return out;
}
