// A GPT-2-shaped .safetensors file with seeded random weights, for benchmarks
// that load a model the size of GPT-2 small from disk (the file is generated,
// never committed). Weights are uniform with the spread of GPT-2's N(0, 0.02)
// initialisation, LayerNorm gains 1; tensors under Hugging Face's names
// without prefix, float32, n_head in __metadata__. Written tensor by tensor,
// so the file is never held whole.
//
//   node web/bench/gpt2-random-file.mjs <out.safetensors> [--layers=12] [--heads=12]
//        [--dModel=768] [--vocab=50257] [--context=1024]
import { closeSync, openSync, writeSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** GPT-2 small's sizes. */
export const kGpt2Small = {
  layers: 12,
  heads: 12,
  dModel: 768,
  vocabSize: 50257,
  contextLength: 1024,
};

/** GPT-2's tensors and shapes (Hugging Face names, no prefix), in the order of the file. */
export function gpt2Shapes({ layers, dModel: C, vocabSize: V, contextLength: Tmax }) {
  const out = [
    ['wte.weight', [V, C]],
    ['wpe.weight', [Tmax, C]],
  ];
  const block = [
    ['ln_1.weight', [C]],
    ['ln_1.bias', [C]],
    ['attn.c_attn.weight', [C, 3 * C]],
    ['attn.c_attn.bias', [3 * C]],
    ['attn.c_proj.weight', [C, C]],
    ['attn.c_proj.bias', [C]],
    ['ln_2.weight', [C]],
    ['ln_2.bias', [C]],
    ['mlp.c_fc.weight', [C, 4 * C]],
    ['mlp.c_fc.bias', [4 * C]],
    ['mlp.c_proj.weight', [4 * C, C]],
    ['mlp.c_proj.bias', [C]],
  ];
  for (let l = 0; l < layers; l++) for (const [s, shape] of block) out.push([`h.${l}.${s}`, shape]);
  out.push(['ln_f.weight', [C]], ['ln_f.bias', [C]]);
  return out;
}

/**
 * The file's tensor list, its header (JSON padded to 8 bytes, UTF-8) and the
 * bytes of tensor data after it, all float32.
 */
export function gpt2Header(config) {
  const list = gpt2Shapes(config);
  const header = { __metadata__: { n_head: String(config.heads) } };
  let dataBytes = 0;
  for (const [name, shape] of list) {
    const bytes = 4 * shape.reduce((a, b) => a * b, 1);
    header[name] = { dtype: 'F32', shape, data_offsets: [dataBytes, dataBytes + bytes] };
    dataBytes += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  return { list, text: new TextEncoder().encode(json), dataBytes };
}

/** A seeded uniform in [-0.5, 0.5): the weights' source in both writers. */
export function seededUniform(seed) {
  let state = seed >>> 0;
  return () => (state = (Math.imul(state, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5;
}

/** Writes the file to `path`; returns its size in bytes. */
export function writeRandomGpt2(path, config = kGpt2Small, seed = 12345) {
  const { list, text, dataBytes: offset } = gpt2Header(config);
  const length = new Uint8Array(8);
  new DataView(length.buffer).setBigUint64(0, BigInt(text.length), true);

  const uniform = seededUniform(seed);
  const piece = new Float32Array(1 << 20);
  const fd = openSync(path, 'w');
  try {
    writeSync(fd, length);
    writeSync(fd, text);
    for (const [name, shape] of list) {
      const gain = /ln_.*\.weight$/.test(name);
      let left = shape.reduce((a, b) => a * b, 1);
      while (left > 0) {
        const n = Math.min(left, piece.length);
        // A uniform of the same spread as N(0, 0.02): 0.02·√12 ≈ 0.069.
        for (let i = 0; i < n; i++) piece[i] = gain ? 1 : 0.069 * uniform();
        writeSync(fd, new Uint8Array(piece.buffer, 0, n * 4));
        left -= n;
      }
    }
  } finally {
    closeSync(fd);
  }
  return 8 + text.length + offset;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [path, ...rest] = process.argv.slice(2);
  if (!path) {
    console.error('usage: node web/bench/gpt2-random-file.mjs <out.safetensors> [--layers=12 …]');
    process.exit(2);
  }
  const args = Object.fromEntries(rest.map((a) => a.replace(/^--/, '').split('=')));
  const config = {
    layers: Number(args.layers ?? kGpt2Small.layers),
    heads: Number(args.heads ?? kGpt2Small.heads),
    dModel: Number(args.dModel ?? kGpt2Small.dModel),
    vocabSize: Number(args.vocab ?? kGpt2Small.vocabSize),
    contextLength: Number(args.context ?? kGpt2Small.contextLength),
  };
  const bytes = writeRandomGpt2(path, config);
  console.log(`wrote ${path}: ${(bytes / 1e6).toFixed(0)} MB, ${JSON.stringify(config)}`);
}
