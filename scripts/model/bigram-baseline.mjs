// The loss a bigram model gets on the held-out tokens: p(b | a) from the
// training tokens' counts, smoothed towards the unigram distribution,
//   p(b | a) = (count(a, b) + β·p(b)) / (count(a) + β),   p(b) add-one smoothed,
// scored on the same targets attnscope_train scores (non-overlapping windows
// of `context` predictions). β is the best of a small grid on the held-out
// tokens themselves, which favours the baseline.
//
// Usage: node bigram-baseline.mjs <train.u16> <heldout.u16> <vocab> <context> [out.json]
import { readFileSync, writeFileSync } from 'node:fs';

const [trainPath, heldOutPath, vocabArg, contextArg, output] = process.argv.slice(2);
const vocab = Number(vocabArg);
const context = Number(contextArg);
if (!trainPath || !heldOutPath || !(vocab > 0) || !(context > 0)) {
  console.error(
    'usage: node bigram-baseline.mjs <train.u16> <heldout.u16> <vocab> <context> [out.json]',
  );
  process.exit(2);
}
const readIds = (path) => {
  const bytes = readFileSync(path);
  return new Uint16Array(bytes.buffer, bytes.byteOffset, bytes.length / 2);
};
const train = readIds(trainPath);
const heldOut = readIds(heldOutPath);

const pairs = new Map();
const firsts = new Float64Array(vocab);
const unigram = new Float64Array(vocab).fill(1);
for (let i = 0; i < train.length; i++) {
  unigram[train[i]] += 1;
  if (i + 1 < train.length) {
    const key = train[i] * vocab + train[i + 1];
    pairs.set(key, (pairs.get(key) ?? 0) + 1);
    firsts[train[i]] += 1;
  }
}
const unigramTotal = unigram.reduce((a, b) => a + b, 0);

// The (previous, next) pairs attnscope_train's final evaluation scores.
const windows = Math.floor((heldOut.length - 1) / context);
function loss(beta) {
  let total = 0;
  for (let w = 0; w < windows; w++) {
    for (let t = 0; t < context; t++) {
      const a = heldOut[w * context + t];
      const b = heldOut[w * context + t + 1];
      const p =
        ((pairs.get(a * vocab + b) ?? 0) + (beta * unigram[b]) / unigramTotal) / (firsts[a] + beta);
      total -= Math.log(p);
    }
  }
  return total / (windows * context);
}
const unigramLoss = (() => {
  let total = 0;
  for (let w = 0; w < windows; w++)
    for (let t = 0; t < context; t++)
      total -= Math.log(unigram[heldOut[w * context + t + 1]] / unigramTotal);
  return total / (windows * context);
})();
let best = { beta: 0, loss: Infinity };
for (const beta of [0.25, 0.5, 1, 2, 4, 8, 16, 32, 64, 128, 256, 512]) {
  const value = loss(beta);
  if (value < best.loss) best = { beta, loss: value };
}
const result = {
  heldOutTargets: windows * context,
  unigramLoss: Number(unigramLoss.toFixed(4)),
  bigramLoss: Number(best.loss.toFixed(4)),
  bigramBeta: best.beta,
};
console.log(`bigram-baseline: ${JSON.stringify(result)}`);
if (output) writeFileSync(output, JSON.stringify(result, null, 2) + '\n');
