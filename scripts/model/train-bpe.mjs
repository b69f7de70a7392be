// Trains a byte-level byte-pair encoding on a text, in the form the
// gpt-tokenizer package encodes with: a rank table whose entry i is token
// i's text (or its bytes when they are not valid UTF-8 alone). Entries 0..255
// are the single bytes; each later entry is the most frequent adjacent pair
// of the tokens so far, counted inside the pieces GPT-2's split pattern cuts
// the text into (so no token crosses a word boundary). Ties go to the pair
// of smaller ids, which makes the table a function of the text alone.
//
// Usage: node train-bpe.mjs <train.txt> <vocab size> <tokenizer.json>
import { readFileSync, writeFileSync } from 'node:fs';

import { kSplitPattern } from './bpe-file.mjs';

const [input, vocabArg, output] = process.argv.slice(2);
const vocabSize = Number(vocabArg);
if (!input || !output || !Number.isInteger(vocabSize) || vocabSize < 257 || vocabSize > 65536) {
  console.error('usage: node train-bpe.mjs <train.txt> <vocab size, 257..65536> <tokenizer.json>');
  process.exit(2);
}

const utf8 = new TextEncoder();
const strictUtf8 = new TextDecoder('utf-8', { fatal: true });

// Each distinct piece once, with how often it occurs.
const counts = new Map();
for (const [piece] of readFileSync(input, 'utf8').matchAll(new RegExp(kSplitPattern, 'gu'))) {
  counts.set(piece, (counts.get(piece) ?? 0) + 1);
}
const words = [...counts.keys()].map((piece) => Array.from(utf8.encode(piece)));
const frequency = [...counts.values()];

const tokenBytes = Array.from({ length: 256 }, (_, b) => [b]);
const pairKey = (a, b) => a * 65536 + b;
const pairCounts = new Map();
function addPairs(word, sign, weight) {
  for (let i = 0; i + 1 < word.length; i++) {
    const key = pairKey(word[i], word[i + 1]);
    pairCounts.set(key, (pairCounts.get(key) ?? 0) + sign * weight);
  }
}
words.forEach((word, w) => addPairs(word, 1, frequency[w]));

while (tokenBytes.length < vocabSize) {
  let best = -1;
  let bestCount = 0;
  for (const [key, count] of pairCounts) {
    if (count > bestCount || (count === bestCount && count > 0 && key < best)) {
      best = key;
      bestCount = count;
    }
  }
  if (bestCount < 2) break; // nothing left worth a token
  const a = Math.floor(best / 65536);
  const b = best % 65536;
  const id = tokenBytes.length;
  tokenBytes.push([...tokenBytes[a], ...tokenBytes[b]]);
  words.forEach((word, w) => {
    let at = -1;
    for (let i = 0; i + 1 < word.length; i++) {
      if (word[i] === a && word[i + 1] === b) {
        at = i;
        break;
      }
    }
    if (at < 0) return;
    addPairs(word, -1, frequency[w]);
    const merged = [];
    for (let i = 0; i < word.length; i++) {
      if (i + 1 < word.length && word[i] === a && word[i + 1] === b) {
        merged.push(id);
        i++;
      } else merged.push(word[i]);
    }
    words[w] = merged;
    addPairs(merged, 1, frequency[w]);
  });
  for (const [key, count] of pairCounts) if (count === 0) pairCounts.delete(key);
}

const ranks = tokenBytes.map((bytes) => {
  try {
    return strictUtf8.decode(Uint8Array.from(bytes));
  } catch {
    return bytes;
  }
});
writeFileSync(output, JSON.stringify({ pattern: kSplitPattern, ranks }) + '\n');
console.log(
  `train-bpe: ${counts.size} distinct pieces, ${ranks.length} tokens; the last merges: ` +
    ranks
      .slice(-8)
      .map((t) => JSON.stringify(t))
      .join(' '),
);
