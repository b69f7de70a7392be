// The King James Bible as plain text, one verse a line without its
// reference, split into a training part and a held-out part: every 20th
// chapter in canonical order (Genesis 20, Genesis 40, ...) is held out, so
// both parts cover every style of the book.
//
// Input: `bible -f gen1:1-rev22:21` (Debian's bible-kjv), lines "Ge1:1 In the beginning ...".
// Usage: node kjv-corpus.mjs <bible-output.txt> <train.txt> <heldout.txt>
import { readFileSync, writeFileSync } from 'node:fs';

const kHeldOutEvery = 20;
const [input, trainPath, heldOutPath] = process.argv.slice(2);
if (!input || !trainPath || !heldOutPath) {
  console.error('usage: node kjv-corpus.mjs <bible-output.txt> <train.txt> <heldout.txt>');
  process.exit(2);
}

const train = [];
const heldOut = [];
let chapterIndex = 0;
let lastChapter = '';
for (const line of readFileSync(input, 'utf8').split('\n')) {
  if (line === '') continue;
  const match = /^(\S+?\d+):\d+ (.*)$/.exec(line);
  if (!match) throw new Error(`kjv-corpus: unexpected line "${line.slice(0, 60)}"`);
  const [, chapter, text] = match;
  if (chapter !== lastChapter) {
    chapterIndex += 1;
    lastChapter = chapter;
  }
  (chapterIndex % kHeldOutEvery === 0 ? heldOut : train).push(text);
}
writeFileSync(trainPath, train.join('\n') + '\n');
writeFileSync(heldOutPath, heldOut.join('\n') + '\n');
console.log(
  `kjv-corpus: ${chapterIndex} chapters; train ${train.length} verses, held out ${heldOut.length} verses (every ${kHeldOutEvery}th chapter)`,
);
