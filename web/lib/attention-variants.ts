// The options of the attention variants (ARCHITECTURE.md, "Attention
// variants"): grouped keys and values with their own length (kvShape), rotary
// embedding (rope), ALiBi or a general bias, and the window and sinks of the
// mask. Checked here so that each bad value is refused naming its argument
// before anything is allocated; the core checks them again against the shapes.
import type { RawTensor } from './attnscope.mjs';
import type { CallInputs } from './call.js';
import {
  checkShape,
  fail,
  finiteNumber,
  formatShape,
  integerIn,
  kMaxDimension,
  maskTensor,
  own,
  positiveInt,
} from './tensors.js';

/** Sizes of an attention call: q (B, H, Tq, d_k), k (B, Hkv, Tk, d_k). */
export interface VariantDims {
  batch: number;
  heads: number;
  kvHeads: number;
  queryLength: number;
  keyLength: number;
  headDim: number;
}

const kRopeFields = ['base'];
const kBiasFields = ['alibi', 'values', 'shape'];

function knownFields(fn: string, name: string, value: object, fields: readonly string[]): void {
  for (const key of Object.keys(value)) {
    if (!fields.includes(key))
      fail(fn, `${name} has an unknown field '${key}' (expected ${fields.join(', ')})`);
  }
}

/**
 * The shape of k from `kvShape` (default: q's shape), checked against q's:
 * same rank, batch and d_k; H a multiple of Hkv; Tq ≤ Tk.
 */
export function keyShape(fn: string, kvShape: unknown, qShape: readonly number[]): number[] {
  if (kvShape === undefined) return [...qShape];
  const rank = qShape.length;
  if (!Array.isArray(kvShape) || kvShape.length !== rank) {
    const got = Array.isArray(kvShape) ? `rank ${kvShape.length}` : typeof kvShape;
    fail(fn, `kvShape must have the rank of shape (${rank}, ${formatShape(qShape)}), got ${got}`);
  }
  const shape = checkShape(fn, 'kvShape', kvShape, [rank], `an array of ${rank} positive integers`);
  const [qHeads, kvHeads] = rank >= 3 ? [qShape[rank - 3]!, shape[rank - 3]!] : [1, 1];
  if (rank === 4 && shape[0] !== qShape[0]) {
    fail(
      fn,
      `kvShape ${formatShape(shape)} has batch ${shape[0]}, but q has batch ${qShape[0]} (shape ${formatShape(qShape)})`,
    );
  }
  if (qHeads % kvHeads !== 0) {
    fail(
      fn,
      `kvShape has ${kvHeads} kv heads, which does not divide q's H=${qHeads}: H % Hkv must be 0`,
    );
  }
  if (shape[rank - 1] !== qShape[rank - 1]) {
    fail(
      fn,
      `kvShape has d_k=${shape[rank - 1]}, but q has d_k=${qShape[rank - 1]}; k and q need the same d_k`,
    );
  }
  if (qShape[rank - 2]! > shape[rank - 2]!) {
    fail(
      fn,
      `shape has Tq=${qShape[rank - 2]} queries, more than kvShape's Tk=${shape[rank - 2]} keys (Tq ≤ Tk)`,
    );
  }
  return shape;
}

/** `rope: { base }` as call numbers; odd d_k and a bad base are refused. */
function ropeInputs(fn: string, rope: unknown, headDim: number): CallInputs {
  if (rope === undefined) return {};
  if (typeof rope !== 'object' || rope === null || Array.isArray(rope)) {
    fail(fn, `rope must be an object { base }, got ${rope === null ? 'null' : typeof rope}`);
  }
  knownFields(fn, 'rope', rope, kRopeFields);
  const baseArg = own(rope, 'base');
  const ropeBase = baseArg === undefined ? 10000 : finiteNumber(fn, 'rope.base', baseArg);
  if (!(ropeBase > 0)) fail(fn, `rope.base must be a finite number > 0, got ${ropeBase}`);
  if (headDim % 2 !== 0) fail(fn, `rope needs an even d_k (it rotates pairs), got d_k=${headDim}`);
  return { numbers: { ropeBase } };
}

/** `bias: 'alibi' | { alibi, values, shape }` as call inputs. */
function biasInputs(fn: string, bias: unknown, dims: VariantDims): CallInputs {
  if (bias === undefined) return {};
  if (bias === 'alibi') return { texts: { bias: 'alibi' } };
  if (typeof bias !== 'object' || bias === null || Array.isArray(bias)) {
    fail(
      fn,
      `bias must be 'alibi' or an object { alibi, values, shape }, got ${bias === null ? 'null' : String(bias)}`,
    );
  }
  knownFields(fn, 'bias', bias, kBiasFields);
  const alibi = own(bias, 'alibi');
  if (alibi !== undefined && typeof alibi !== 'boolean')
    fail(fn, `bias.alibi must be a boolean, got ${typeof alibi}`);
  const inputs: CallInputs = { texts: { bias: alibi ? 'alibi' : undefined }, tensors: {} };
  const values = own(bias, 'values');
  if (values !== undefined) {
    const { batch, heads, queryLength, keyLength } = dims;
    const shape = own(bias, 'shape');
    if (shape !== undefined)
      checkShape(fn, 'bias.shape', shape, [3, 4], '(H, Tq, Tk) or (B, H, Tq, Tk)');
    const candidates = [
      [heads, queryLength, keyLength],
      [batch, heads, queryLength, keyLength],
    ];
    const t: RawTensor = maskTensor(fn, 'bias.values', values, shape, candidates);
    inputs.tensors!.biasValues = t;
  } else if (!alibi) {
    fail(fn, 'bias needs alibi: true or values');
  }
  return inputs;
}

/** `mask.window` and `mask.sinks` as call numbers. */
export function windowInputs(fn: string, mask: object, keyLength: number): CallInputs {
  const numbers: CallInputs['numbers'] = {};
  const window = own(mask, 'window');
  if (window !== undefined) numbers.window = positiveInt(fn, 'mask.window', window);
  const sinks = own(mask, 'sinks');
  if (sinks !== undefined) {
    numbers.sinks = integerIn(fn, 'mask.sinks', sinks, 0, kMaxDimension);
    if (numbers.sinks > keyLength)
      fail(fn, `mask.sinks is ${sinks}, more than Tk=${keyLength} keys`);
  }
  return { numbers };
}

/** rope and bias of `args` as call inputs, and whether each is on (for the memory guard). */
export function variantInputs(
  fn: string,
  args: object,
  dims: VariantDims,
): { inputs: CallInputs; rope: boolean; bias: boolean } {
  const rope = ropeInputs(fn, own(args, 'rope'), dims.headDim);
  const bias = biasInputs(fn, own(args, 'bias'), dims);
  return {
    inputs: {
      numbers: { ...rope.numbers },
      texts: { ...bias.texts },
      tensors: { ...bias.tensors },
    },
    rope: rope.numbers !== undefined,
    bias: own(args, 'bias') !== undefined,
  };
}
