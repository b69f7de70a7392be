// The project's tokenizer file (models/kjv/tokenizer.json) and an encoder
// for it built on gpt-tokenizer's byte-pair core: { pattern, ranks }, where
// ranks[i] is token i's text, or its bytes when they are not valid UTF-8.
import { readFileSync } from 'node:fs';

import { BytePairEncodingCore } from 'gpt-tokenizer/BytePairEncodingCore';

/** GPT-2's pattern: contractions, words, numbers and punctuation runs, each with the space before it. */
export const kSplitPattern =
  "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/** Reads a tokenizer file; returns encode/decode and the vocabulary size. */
export function loadBpeFile(path) {
  const { pattern, ranks } = JSON.parse(readFileSync(path, 'utf8'));
  const core = new BytePairEncodingCore({
    bytePairRankDecoder: ranks,
    tokenSplitRegex: new RegExp(pattern, 'gu'),
  });
  return {
    vocabSize: ranks.length,
    ranks,
    encode: (text) => core.encodeNative(text, new Set()),
    decode: (ids) => core.decodeNative(ids),
  };
}
