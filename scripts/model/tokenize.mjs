// Encodes a text with the project's tokenizer file into little-endian
// uint16 token ids (the training tool's input), and checks that decoding
// them gives the text back.
//
// Usage: node tokenize.mjs <tokenizer.json> <text.txt> <ids.u16>
import { readFileSync, writeFileSync } from 'node:fs';

import { loadBpeFile } from './bpe-file.mjs';

const [tokenizerPath, textPath, output] = process.argv.slice(2);
if (!tokenizerPath || !textPath || !output) {
  console.error('usage: node tokenize.mjs <tokenizer.json> <text.txt> <ids.u16>');
  process.exit(2);
}
const tokenizer = loadBpeFile(tokenizerPath);
if (tokenizer.vocabSize > 65536) throw new Error('tokenize: the vocabulary does not fit in uint16');
const text = readFileSync(textPath, 'utf8');
const ids = Uint16Array.from(tokenizer.encode(text));
if (tokenizer.decode(ids) !== text) throw new Error(`tokenize: ${textPath} does not round-trip`);
const bytes = new Uint8Array(ids.length * 2);
const view = new DataView(bytes.buffer);
ids.forEach((id, i) => view.setUint16(i * 2, id, true));
writeFileSync(output, bytes);
console.log(
  `tokenize: ${textPath}: ${text.length} characters -> ${ids.length} tokens ` +
    `(${(text.length / ids.length).toFixed(2)} characters a token)`,
);
