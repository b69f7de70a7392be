// attnscope/bpe-tokenizer: a byte-level BPE from a rank file such as the
// shipped model's models/kjv/tokenizer.json, encoded by the gpt-tokenizer
// package's byte-pair core (the one its GPT encodings run on).
import { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';

import { AttnScopeError } from './errors.js';
import { checkText, decodeIds, piecesOf, type TokenPiece } from './token-text.js';

export type { TokenPiece };

/** The file's contents (JSON): a split pattern and the rank table. */
export interface BpeTokenizerFile {
  /**
   * The pattern that cuts text into the pieces tokens never cross (a
   * JavaScript regular expression's source, used with the flags "gu").
   */
  pattern: string;
  /**
   * ranks[i]: token i's text, or its bytes when they are not valid UTF-8
   * alone. Every single byte is one of them; a lower id merges first.
   */
  ranks: (string | number[])[];
}

/** A byte-level BPE tokenizer: text to token ids and back. */
export interface BpeTokenizer {
  /** Token ids of `text`, each in [0, vocabSize). */
  encode(text: string): number[];
  /** The text of token ids (bytes that are not valid UTF-8 become U+FFFD). */
  decode(ids: ArrayLike<number>): string;
  /** encode(text) with each token's piece of `text`. */
  pieces(text: string): TokenPiece[];
  /** The number of token ids. */
  vocabSize: number;
}

const kMaxVocab = 1 << 20;

function fail(message: string): never {
  throw new AttnScopeError(`bpeTokenizer: ${message}`);
}

function tokenBytes(ranks: unknown): Uint8Array[] {
  if (!Array.isArray(ranks) || ranks.length < 256 || ranks.length > kMaxVocab)
    fail(`file.ranks must be an array of 256 to ${kMaxVocab} tokens`);
  const utf8 = new TextEncoder();
  const singleBytes = new Set<number>();
  const bytes = ranks.map((entry: unknown, i) => {
    let out: Uint8Array;
    if (typeof entry === 'string') out = utf8.encode(entry);
    else if (Array.isArray(entry) && entry.every((b) => Number.isInteger(b) && b >= 0 && b <= 255))
      out = Uint8Array.from(entry as number[]);
    else fail(`file.ranks[${i}] must be a string or an array of bytes (0..255)`);
    if (out.length === 0) fail(`file.ranks[${i}] is empty`);
    if (out.length === 1) singleBytes.add(out[0]!);
    return out;
  });
  if (singleBytes.size !== 256)
    fail(`file.ranks holds ${singleBytes.size} of the 256 single bytes; every byte needs a token`);
  return bytes;
}

function splitPattern(pattern: unknown): RegExp {
  if (typeof pattern !== 'string') fail('file.pattern must be a string');
  try {
    return new RegExp(pattern, 'gu');
  } catch (e) {
    fail(`file.pattern is not a regular expression: ${e instanceof Error ? e.message : String(e)}`);
  }
}

/** A tokenizer from a rank file's parsed JSON; throws AttnScopeError naming the bad field. */
export function bpeTokenizer(file: BpeTokenizerFile): BpeTokenizer {
  if (typeof file !== 'object' || file === null) fail('file must be an object { pattern, ranks }');
  const bytes = tokenBytes(file.ranks);
  const core = new BytePairEncodingCore({
    bytePairRankDecoder: file.ranks,
    tokenSplitRegex: splitPattern(file.pattern),
  });
  const bytesOf = (id: number) => bytes[id]!;
  const encode = (text: string): number[] => {
    checkText('bpeTokenizer.encode', text);
    return core.encodeNative(text, new Set());
  };
  return Object.freeze({
    encode,
    decode: (ids: ArrayLike<number>) =>
      decodeIds('bpeTokenizer.decode', ids, bytes.length, bytesOf),
    pieces(text: string): TokenPiece[] {
      checkText('bpeTokenizer.pieces', text);
      return piecesOf('bpeTokenizer.pieces', text, encode(text), bytesOf);
    },
    vocabSize: bytes.length,
  });
}
