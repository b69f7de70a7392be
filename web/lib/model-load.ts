// What loadModel reads from a .safetensors file before anything is
// allocated: the GPT-2 tensors by their Hugging Face names (with or without
// the "transformer." prefix), the config their shapes imply, and a check of
// every tensor's name, dtype and shape against it.
import type { ModelConfig } from './model-types.js';
import type { SafetensorsEntry, SafetensorsHeader } from './safetensors.js';
import { fail, formatShape, integerIn, kMaxDimension, own } from './tensors.js';

const kPrefix = 'transformer.';
/** Per-block tensors, with their shapes for C = dModel. */
const kLayerTensors: [string, (c: number) => number[]][] = [
  ['ln_1.weight', (c) => [c]],
  ['ln_1.bias', (c) => [c]],
  ['attn.c_attn.weight', (c) => [c, 3 * c]],
  ['attn.c_attn.bias', (c) => [3 * c]],
  ['attn.c_proj.weight', (c) => [c, c]],
  ['attn.c_proj.bias', (c) => [c]],
  ['ln_2.weight', (c) => [c]],
  ['ln_2.bias', (c) => [c]],
  ['mlp.c_fc.weight', (c) => [c, 4 * c]],
  ['mlp.c_fc.bias', (c) => [4 * c]],
  ['mlp.c_proj.weight', (c) => [4 * c, c]],
  ['mlp.c_proj.bias', (c) => [c]],
];
/** Buffers of Hugging Face's GPT-2 (the causal mask), not weights. */
const kIgnored = /^h\.\d+\.attn\.(bias|masked_bias)$/;
const kLayerName = /^h\.(0|[1-9]\d*)\.(.+)$/;
const kConfigFields = ['architecture', 'layers', 'heads', 'dModel', 'vocabSize', 'contextLength'];

/** Every tensor of a GPT-2 model, in the core's order, with its shape. */
export function gpt2TensorShapes(config: ModelConfig): [string, number[]][] {
  const c = config.dModel;
  const out: [string, number[]][] = [
    ['wte.weight', [config.vocabSize, c]],
    ['wpe.weight', [config.contextLength, c]],
  ];
  for (let l = 0; l < config.layers; l++) {
    for (const [suffix, shape] of kLayerTensors) out.push([`h.${l}.${suffix}`, shape(c)]);
  }
  out.push(['ln_f.weight', [c]], ['ln_f.bias', [c]]);
  return out;
}

/** The file's tensors by their names without prefix; the causal-mask buffers left out. */
function tensorsByName(fn: string, header: SafetensorsHeader): Map<string, SafetensorsEntry> {
  const byName = new Map<string, SafetensorsEntry>();
  for (const entry of header.tensors) {
    const name = entry.name.startsWith(kPrefix) ? entry.name.slice(kPrefix.length) : entry.name;
    if (kIgnored.test(name)) continue;
    if (byName.has(name))
      fail(fn, `tensor ${entry.name} appears twice (with and without the "transformer." prefix)`);
    byName.set(name, entry);
  }
  return byName;
}

function requireTensor(
  fn: string,
  tensors: Map<string, SafetensorsEntry>,
  name: string,
): SafetensorsEntry {
  const entry = tensors.get(name);
  if (!entry) fail(fn, `the file has no tensor ${name} (a GPT-2 model needs it)`);
  return entry;
}

/** The layer count: one more than the highest h.{i}; unknown names are refused. */
function layerCount(fn: string, tensors: Map<string, SafetensorsEntry>): number {
  let layers = 0;
  const known = new Set(['wte.weight', 'wpe.weight', 'ln_f.weight', 'ln_f.bias']);
  const suffixes = new Set(kLayerTensors.map(([s]) => s));
  for (const [name, entry] of tensors) {
    const m = kLayerName.exec(name);
    if (m && suffixes.has(m[2]!)) layers = Math.max(layers, Number(m[1]) + 1);
    else if (!known.has(name))
      fail(fn, `tensor ${entry.name} is not part of a GPT-2 model (unknown name)`);
  }
  if (layers === 0)
    fail(fn, 'the file has no tensor h.0.* (a GPT-2 model needs at least one block)');
  return layers;
}

function headCount(
  fn: string,
  given: unknown,
  metadata: Record<string, string>,
  dModel: number,
): number {
  let heads: number;
  if (given !== undefined) heads = integerIn(fn, 'config.heads', given, 1, kMaxDimension);
  else if (metadata.n_head !== undefined) {
    heads = Number(metadata.n_head);
    if (!Number.isInteger(heads) || heads < 1)
      fail(
        fn,
        `the file's __metadata__ n_head is "${metadata.n_head}", expected a positive integer`,
      );
  } else heads = Math.max(1, Math.floor(dModel / 64));
  if (dModel % heads !== 0)
    fail(fn, `heads=${heads} does not divide dModel=${dModel} (the width of wte.weight)`);
  return heads;
}

/**
 * The config of the GPT-2 in `header` and where each of its tensors is, all
 * checked (names, dtypes, shapes, the caller's config) before any allocation.
 */
export function readGpt2(
  fn: string,
  header: SafetensorsHeader,
  given: unknown,
): { config: ModelConfig; entries: [string, number[], SafetensorsEntry][] } {
  if (given !== undefined && (typeof given !== 'object' || given === null))
    fail(fn, `config must be an object, got ${String(given)}`);
  // A misspelt field (say `head`) would otherwise be ignored, silently.
  for (const key of Object.keys(given ?? {})) {
    if (!kConfigFields.includes(key))
      fail(fn, `config has an unknown field '${key}' (expected ${kConfigFields.join(', ')})`);
  }
  const tensors = tensorsByName(fn, header);
  const wte = requireTensor(fn, tensors, 'wte.weight');
  const wpe = requireTensor(fn, tensors, 'wpe.weight');
  if (wte.shape.length !== 2)
    fail(
      fn,
      `tensor ${wte.name} has shape ${formatShape(wte.shape)}, expected [vocabSize, dModel]`,
    );
  if (wpe.shape.length !== 2)
    fail(
      fn,
      `tensor ${wpe.name} has shape ${formatShape(wpe.shape)}, expected [contextLength, dModel]`,
    );
  const dModel = wte.shape[1]!;
  const config: ModelConfig = {
    architecture: 'gpt2',
    layers: layerCount(fn, tensors),
    heads: headCount(fn, own(given, 'heads'), header.metadata, dModel),
    dModel,
    vocabSize: wte.shape[0]!,
    contextLength: wpe.shape[0]!,
  };
  const architecture = own(given, 'architecture');
  if (architecture !== undefined && architecture !== 'gpt2')
    fail(fn, `config.architecture is ${String(architecture)}, but only 'gpt2' is supported`);
  for (const key of ['layers', 'dModel', 'vocabSize', 'contextLength'] as const) {
    const value = own(given, key);
    if (value !== undefined && value !== config[key])
      fail(fn, `config.${key} is ${String(value)}, but the file's tensors say ${config[key]}`);
  }
  const entries: [string, number[], SafetensorsEntry][] = [];
  for (const [name, shape] of gpt2TensorShapes(config)) {
    const entry = requireTensor(fn, tensors, name);
    if (entry.shape.length !== shape.length || entry.shape.some((d, i) => d !== shape[i])) {
      fail(
        fn,
        `tensor ${entry.name} has shape ${formatShape(entry.shape)}, expected ${formatShape(shape)} ` +
          `(dModel=${dModel} from wte.weight)`,
      );
    }
    entries.push([name, shape, entry]);
  }
  return { config, entries };
}
