// GPT-2s written by the tests themselves (a tiny one in memory, and one of any
// size on disk, writeGpt2File): seeded random weights under
// Hugging Face's tensor names (docs: ARCHITECTURE.md "Models"), stored as a
// real .safetensors file in float32, float16 or bfloat16. The file is put
// together here byte by byte (not with the package's writer) so that a
// reading test does not lean on the code it checks.
import { closeSync, openSync, writeSync } from 'node:fs';

import { rng } from './support.mjs';

/** The parameters of a GPT-2 and their shapes, in the order Hugging Face's model lists them. */
export function gpt2Shapes({ layers, dModel: C, vocabSize: V, contextLength: Tmax }) {
  const shapes = [
    ['wte.weight', [V, C]],
    ['wpe.weight', [Tmax, C]],
  ];
  for (let i = 0; i < layers; i++) {
    const h = `h.${i}`;
    shapes.push(
      [`${h}.ln_1.weight`, [C]],
      [`${h}.ln_1.bias`, [C]],
      [`${h}.attn.c_attn.weight`, [C, 3 * C]],
      [`${h}.attn.c_attn.bias`, [3 * C]],
      [`${h}.attn.c_proj.weight`, [C, C]],
      [`${h}.attn.c_proj.bias`, [C]],
      [`${h}.ln_2.weight`, [C]],
      [`${h}.ln_2.bias`, [C]],
      [`${h}.mlp.c_fc.weight`, [C, 4 * C]],
      [`${h}.mlp.c_fc.bias`, [4 * C]],
      [`${h}.mlp.c_proj.weight`, [4 * C, C]],
      [`${h}.mlp.c_proj.bias`, [C]],
    );
  }
  shapes.push(['ln_f.weight', [C]], ['ln_f.bias', [C]]);
  return shapes;
}

/** Rounds half to even. */
function roundEven(y) {
  const r = Math.round(y);
  return r - y === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

/** The float16 nearest to x (ties to even): { bits, value }. Finite x only. */
export function toFloat16(x) {
  const sign = x < 0 || Object.is(x, -0) ? 0x8000 : 0;
  const a = Math.abs(x);
  const signed = (value) => (sign ? -value : value);
  if (a < 2 ** -14) {
    const m = roundEven(a * 2 ** 24); // subnormals are multiples of 2^-24 (m = 1024 is the smallest normal)
    return { bits: sign | m, value: signed(m * 2 ** -24) };
  }
  let e = Math.floor(Math.log2(a));
  if (2 ** e > a) e--;
  if (2 ** (e + 1) <= a) e++;
  let m = roundEven((a / 2 ** e) * 1024); // in [1024, 2048]
  if (m === 2048) [m, e] = [1024, e + 1];
  if (e > 15) return { bits: sign | 0x7c00, value: signed(Infinity) };
  return { bits: sign | ((e + 15) << 10) | (m - 1024), value: signed(m * 2 ** (e - 10)) };
}

/** The bfloat16 nearest to the float32 x (ties to even): { bits, value }. Finite x only. */
export function toBfloat16(x) {
  const u = new Uint32Array(Float32Array.of(x).buffer)[0];
  const bits = ((u + 0x7fff + ((u >>> 16) & 1)) >>> 16) & 0xffff;
  return { bits, value: new Float32Array(Uint32Array.of(bits << 16).buffer)[0] };
}

/**
 * The start of a .safetensors file, its 8-byte length and JSON header padded to 8 bytes, for
 * tensors [name, dtype, shape, byteLength] stored in that order after it.
 */
export function safetensorsHeader(entries, metadata) {
  const header = metadata ? { __metadata__: metadata } : {};
  let offset = 0;
  for (const [name, dtype, shape, byteLength] of entries) {
    header[name] = { dtype, shape, data_offsets: [offset, offset + byteLength] };
    offset += byteLength;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);
  const text = new TextEncoder().encode(json);
  const start = new Uint8Array(8 + text.length);
  new DataView(start.buffer).setBigUint64(0, BigInt(text.length), true);
  start.set(text, 8);
  return start;
}

/** A .safetensors file from [name, dtype, shape, bytes] in order; header padded to 8 bytes. */
export function safetensorsFile(entries, metadata) {
  const start = safetensorsHeader(
    entries.map(([name, dtype, shape, bytes]) => [name, dtype, shape, bytes.length]),
    metadata,
  );
  const file = new Uint8Array(start.length + entries.reduce((n, e) => n + e[3].length, 0));
  file.set(start);
  let at = start.length;
  for (const [, , , bytes] of entries) {
    file.set(bytes, at);
    at += bytes.length;
  }
  return file;
}

/** values as the little-endian bytes of `dtype`, and the values the file then holds. */
function encode(values, dtype) {
  if (dtype === 'F32') {
    const held = Float32Array.from(values);
    return { bytes: new Uint8Array(held.buffer), held };
  }
  const round = dtype === 'F16' ? toFloat16 : toBfloat16;
  const bits = new Uint16Array(values.length);
  const held = new Float32Array(values.length);
  for (let i = 0; i < values.length; i++) {
    const rounded = round(values[i]);
    bits[i] = rounded.bits;
    held[i] = rounded.value;
  }
  return { bytes: new Uint8Array(bits.buffer), held };
}

/** Seeded values for a parameter: LayerNorm gains near 1, biases small, matrices ~ ±0.5. */
function initialValues(name, count, random) {
  if (/ln_.*\.weight$/.test(name)) return random.floats(count, 0.8, 1.2);
  if (name.endsWith('.bias')) return random.floats(count, -0.1, 0.1);
  return random.floats(count, -0.5, 0.5);
}

/**
 * A GPT-2 in a real .safetensors file. `weights` holds the parameters the
 * file holds (after rounding to `dtype`), by their names without `prefix`;
 * the file also has each layer's `attn.bias` buffer (the causal mask, as
 * Hugging Face's files do), which `weights` leaves out. `metadata` is the
 * file's "__metadata__" (null: none).
 */
export function tinyGpt2({
  layers = 2,
  heads = 2,
  dModel = 8,
  vocabSize = 11,
  contextLength = 16,
  seed = 1,
  dtype = 'F32',
  prefix = '',
  metadata = { format: 'pt', n_head: String(heads) },
} = {}) {
  const config = { layers, heads, dModel, vocabSize, contextLength };
  const random = rng(seed);
  const weights = new Map();
  const entries = [];
  for (const [name, shape] of gpt2Shapes(config)) {
    const count = shape.reduce((a, b) => a * b, 1);
    const { bytes, held } = encode(initialValues(name, count, random), dtype);
    weights.set(name, { data: held, shape });
    entries.push([prefix + name, dtype, shape, bytes]);
    if (name.endsWith('.attn.c_proj.bias')) {
      const mask = Array.from({ length: contextLength ** 2 }, (_, k) =>
        k % contextLength <= Math.floor(k / contextLength) ? 1 : 0,
      );
      const layer = name.slice(0, name.indexOf('.attn.'));
      entries.push([
        `${prefix}${layer}.attn.bias`,
        dtype,
        [1, 1, contextLength, contextLength],
        encode(mask, dtype).bytes,
      ]);
    }
  }
  return { bytes: safetensorsFile(entries, metadata ?? undefined), weights, config };
}

/**
 * A float32 GPT-2 written to `path` a tensor at a time, for sizes that should not be held twice
 * (GPT-2 medium's is 1.4 GB). Each tensor's values come from a generator seeded by its index in
 * the file, so `weights.get(name)` makes them again for the reference instead of keeping them.
 * Spreads as GPT-2's initialisation: matrices uniform with a standard deviation of 0.02,
 * LayerNorm gains near 1, biases small.
 */
export function writeGpt2File(path, config, seed = 1) {
  const shapes = gpt2Shapes(config);
  const spread = 0.02 * Math.sqrt(3);
  const valuesOf = (index) => {
    const [name, shape] = shapes[index];
    const count = shape.reduce((a, b) => a * b, 1);
    const random = rng(seed * 100_003 + index);
    if (/ln_.*\.weight$/.test(name)) return random.floats(count, 0.9, 1.1);
    if (name.endsWith('.bias')) return random.floats(count, -0.02, 0.02);
    return random.floats(count, -spread, spread);
  };
  const fd = openSync(path, 'w');
  try {
    const entries = shapes.map(([name, shape]) => [
      name,
      'F32',
      shape,
      4 * shape.reduce((a, b) => a * b, 1),
    ]);
    const writeAll = (bytes) => {
      for (let at = 0; at < bytes.length;) at += writeSync(fd, bytes, at);
    };
    writeAll(safetensorsHeader(entries, { format: 'pt', n_head: String(config.heads) }));
    for (let i = 0; i < shapes.length; i++) writeAll(new Uint8Array(valuesOf(i).buffer));
  } finally {
    closeSync(fd);
  }
  const indexOf = new Map(shapes.map(([name], i) => [name, i]));
  const weights = {
    get(name) {
      const i = indexOf.get(name);
      return i === undefined ? undefined : { data: valuesOf(i), shape: shapes[i][1] };
    },
  };
  return { weights, config };
}
