// Scores every attention head of a GPT-2 file on held-out text for four
// patterns with a name, each the mean attention weight a query gives to
// the keys the pattern picks (1 = all of it, always):
//   previous token  the key just before the query (queries 1..T-1);
//   first token     position 0 (queries 1..T-1);
//   same word       earlier positions holding the query's own token (queries that have one);
//   induction       on a held-out passage of L tokens written twice, the key just after the
//                   query's token in the first copy (queries of the second copy).
// Next to each score, the same measure for attention spread evenly over the
// keys a causal query sees, so a score can be read against chance.
//
// Usage: node head-patterns.mjs <model.safetensors> <tokenizer.json> <heldout.txt> [out.json]
import { readFileSync, writeFileSync } from 'node:fs';

import { createAttnScope } from 'attnscope';

import { loadBpeFile } from './bpe-file.mjs';

const kWindows = 16; // held-out windows of contextLength tokens
const kRepeats = 8; // passages written twice
const [modelPath, tokenizerPath, textPath, output] = process.argv.slice(2);
if (!modelPath || !tokenizerPath || !textPath) {
  console.error(
    'usage: node head-patterns.mjs <model.safetensors> <tokenizer.json> <heldout.txt> [out.json]',
  );
  process.exit(2);
}

const engine = await createAttnScope();
const model = engine.loadModel(readFileSync(modelPath));
const { layers, heads, contextLength: T } = model.config;
const ids = loadBpeFile(tokenizerPath).encode(readFileSync(textPath, 'utf8'));
const patterns = ['previousToken', 'firstToken', 'sameWord', 'induction'];

// sums[pattern][layer * heads + head] and the count of queries scored.
const sums = Object.fromEntries(patterns.map((p) => [p, new Float64Array(layers * heads)]));
const chance = Object.fromEntries(patterns.map((p) => [p, 0]));
const counts = Object.fromEntries(patterns.map((p) => [p, 0]));

/** Adds, for every head, the weight query q gives to `keys`. */
function score(pattern, attentions, q, keys) {
  if (keys.length === 0) return;
  for (let l = 0; l < layers; l++) {
    const a = attentions[l].data;
    for (let h = 0; h < heads; h++) {
      let mass = 0;
      for (const k of keys) mass += a[(h * T + q) * T + k];
      sums[pattern][l * heads + h] += mass;
    }
  }
  chance[pattern] += keys.length / (q + 1);
  counts[pattern] += 1;
}

const traced = (tokens) => model.forward({ tokens, trace: true }).attentions;

const step = Math.floor((ids.length - T) / kWindows);
for (let w = 0; w < kWindows; w++) {
  const tokens = ids.slice(w * step, w * step + T);
  const attentions = traced(tokens);
  for (let q = 1; q < T; q++) {
    score('previousToken', attentions, q, [q - 1]);
    score('firstToken', attentions, q, [0]);
    const same = [];
    for (let k = 0; k < q; k++) if (tokens[k] === tokens[q]) same.push(k);
    score('sameWord', attentions, q, same);
  }
}
const half = T / 2;
const repeatStep = Math.floor((ids.length - half) / kRepeats);
for (let r = 0; r < kRepeats; r++) {
  const passage = ids.slice(r * repeatStep + 7, r * repeatStep + 7 + half);
  const attentions = traced(passage.concat(passage));
  // Query half + i holds passage[i]; its induction key is i + 1 (when
  // passage[i] occurs once in the passage, the only one the pattern names).
  for (let i = 0; i + 1 < half; i++) {
    if (passage.indexOf(passage[i]) === i && passage.lastIndexOf(passage[i]) === i)
      score('induction', attentions, half + i, [i + 1]);
  }
}

const chanceMeans = Object.fromEntries(
  patterns.map((p) => [p, Number((chance[p] / counts[p]).toFixed(3))]),
);
const table = [];
for (let l = 0; l < layers; l++) {
  for (let h = 0; h < heads; h++) {
    const row = { head: `L${l}H${h}` };
    for (const p of patterns) row[p] = Number((sums[p][l * heads + h] / counts[p]).toFixed(3));
    table.push(row);
  }
}
model.dispose();
console.table(table);
console.log('chance (attention spread evenly):', chanceMeans);
if (output) {
  const report = { layers, heads, queries: counts, chance: chanceMeans, heads: table };
  writeFileSync(output, JSON.stringify(report, null, 2) + '\n');
}
