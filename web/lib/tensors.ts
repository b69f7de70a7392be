// Turning user input (typed arrays, plain or nested arrays, shapes) into the
// flat row-major tensors the bindings take. Only cheap checks live here —
// types, lengths against shapes, positive sizes; the core checks the rest
// (values included) and its messages pass through unchanged.
import type { RawBoolTensor, RawTensor } from './attnscope.mjs';
import { AttnScopeError } from './errors.js';
import type { TensorInput } from './types.js';

/** The largest dimension, count or head number: more floats than 4 GiB can hold is never valid. */
export const kMaxDimension = 2 ** 30;
/** The largest finite float32. */
const kFloatMax = 3.4028234663852886e38;

// The typed-array getters themselves, so that an own `length` (or `buffer`,
// `byteOffset`) property on a caller's array is never what is read, and a
// Proxy or a fake with a typed array's prototype is told apart from the real one.
const typedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
function intrinsicGetter(name: string | symbol): (this: unknown) => unknown {
  return Object.getOwnPropertyDescriptor(typedArrayPrototype, name)!.get!;
}
const typedArrayTag = intrinsicGetter(Symbol.toStringTag);
const typedArrayLength = intrinsicGetter('length');
const typedArrayBuffer = intrinsicGetter('buffer');
const typedArrayOffset = intrinsicGetter('byteOffset');

/** 'Float32Array' etc. for a real typed array, undefined for anything else (a Proxy included). */
export function typedArrayKind(value: unknown): string | undefined {
  return typedArrayTag.call(value) as string | undefined;
}

/** A fresh view of a real typed array's own elements: its length cannot lie. */
function honestView<T extends Float32Array | Float64Array | Uint8Array>(
  array: T,
  make: new (buffer: ArrayBufferLike, offset: number, length: number) => T,
): T {
  // A detached buffer reads as length 0 and cannot be viewed.
  if ((typedArrayLength.call(array) as number) === 0) return new make(new ArrayBuffer(0), 0, 0);
  return new make(
    typedArrayBuffer.call(array) as ArrayBufferLike,
    typedArrayOffset.call(array) as number,
    typedArrayLength.call(array) as number,
  );
}

/** A fresh, honest view of a real Float32Array, Float64Array or Uint8Array; undefined for anything else. */
export function honestTypedArray(
  value: unknown,
): Float32Array | Float64Array | Uint8Array | undefined {
  switch (typedArrayKind(value)) {
    case 'Float32Array':
      return honestView(value as Float32Array, Float32Array);
    case 'Float64Array':
      return honestView(value as Float64Array, Float64Array);
    case 'Uint8Array':
      return honestView(value as Uint8Array, Uint8Array);
    default:
      return undefined;
  }
}

/** `value` as a Float32Array the engine owns the view of, or undefined if it is none. */
export function honestFloat32Array(value: unknown): Float32Array | undefined {
  return typedArrayKind(value) === 'Float32Array'
    ? honestView(value as Float32Array, Float32Array)
    : undefined;
}

/** Own property `key` of a caller's object: inherited values (a polluted prototype) are never read. */
export function own(object: unknown, key: string): unknown {
  return typeof object === 'object' &&
    object !== null &&
    Object.prototype.hasOwnProperty.call(object, key)
    ? (object as Record<string, unknown>)[key]
    : undefined;
}

/** Throws an AttnScopeError prefixed with the API function's name. */
export function fail(fn: string, message: string): never {
  throw new AttnScopeError(`${fn}: ${message}`);
}

/** How an unexpected value is named in error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  const kind = typedArrayKind(value);
  if (kind) return kind;
  if (typeof value === 'bigint') return `the BigInt ${String(value)}n`;
  return typeof value;
}

export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

export function product(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** An integer argument in [min, max], such as `heads`, `hidden` or a mask length. */
export function integerIn(
  fn: string,
  name: string,
  value: unknown,
  min: number,
  max: number,
): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const what =
      min === 1
        ? 'a positive integer'
        : min === 0
          ? 'a non-negative integer'
          : `an integer from ${min}`;
    const got = typeof value === 'number' ? value : describe(value);
    fail(
      fn,
      `${name} must be ${what}, got ${got}${typeof value === 'number' && value > max ? ` (at most ${max})` : ''}`,
    );
  }
  return value;
}

/** A positive integer argument such as `heads` or `hidden`, at most kMaxDimension. */
export function positiveInt(fn: string, name: string, value: unknown): number {
  return integerIn(fn, name, value, 1, kMaxDimension);
}

/**
 * A finite number the engine takes as a float32 (`eps`, `base`, a scale):
 * refused, naming the value, when float32 cannot hold it, so that 1e-50 is
 * never reported as 0 nor 1e39 as inf.
 */
export function finiteNumber(fn: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    fail(
      fn,
      `${name} must be a finite number, got ${typeof value === 'number' ? value : describe(value)}`,
    );
  }
  const single = Math.fround(value);
  if (!Number.isFinite(single))
    fail(fn, `${name} is ${value}, outside float32's range (±${kFloatMax})`);
  if (single === 0 && value !== 0) {
    fail(
      fn,
      `${name} is ${value}, which rounds to 0 in float32 (the smallest positive float32 is 1.4e-45)`,
    );
  }
  return value;
}

/**
 * A caller's array of integers in [min, max], copied by index: holes, inherited
 * elements and custom iterators never count, and the copy cannot change later.
 */
export function integerList(
  fn: string,
  name: string,
  value: unknown,
  max: number,
  min = 0,
): number[] {
  if (!Array.isArray(value))
    fail(fn, `${name} must be an array of integers, got ${describe(value)}`);
  const length = value.length;
  if (length > kMaxDimension) fail(fn, `${name} has ${length} entries, more than ${kMaxDimension}`);
  const out = new Array<number>(length);
  for (let i = 0; i < length; i++) {
    if (!Object.prototype.hasOwnProperty.call(value, i))
      fail(fn, `${name}[${i}] is missing (a hole in the array)`);
    out[i] = integerIn(fn, `${name}[${i}]`, value[i], min, max);
  }
  return out;
}

/** A shape: an array of positive integers with one of the allowed ranks. */
export function checkShape(
  fn: string,
  name: string,
  shape: unknown,
  ranks: readonly number[],
  expected: string,
): number[] {
  if (!Array.isArray(shape)) fail(fn, `${name} must be ${expected}, got ${describe(shape)}`);
  if (!ranks.includes(shape.length)) {
    fail(fn, `${name} must be ${expected}, got rank ${shape.length}`);
  }
  return integerList(fn, name, shape, kMaxDimension, 1);
}

interface Flat {
  data: Float32Array;
  /** Set when the input was a nested array: the shape its nesting gives. */
  nestedShape?: number[];
}

/** No tensor has more dimensions; deeper nesting is refused before it is walked. */
const kMaxNesting = 4;

/** Shape given by the nesting of plain arrays, following first elements. */
function nestingShape(fn: string, name: string, input: readonly unknown[]): number[] {
  const shape: number[] = [];
  let level: unknown = input;
  while (Array.isArray(level)) {
    if (shape.length === kMaxNesting) {
      fail(
        fn,
        `${name} is nested more than ${kMaxNesting} levels deep (a tensor has at most ${kMaxNesting} dimensions)`,
      );
    }
    if (level.length === 0) fail(fn, `${name} has an empty dimension at depth ${shape.length}`);
    shape.push(level.length);
    level = level[0];
  }
  return shape;
}

/** Fails unless every element of `data` (converted from `source`) is a finite float32 or kept its NaN/inf. */
function checkFloatRange(
  fn: string,
  name: string,
  data: Float32Array,
  source: ArrayLike<number>,
): void {
  for (let i = 0; i < data.length; i++) {
    const v = data[i]!;
    if ((v === Infinity || v === -Infinity) && Number.isFinite(source[i]!)) {
      fail(
        fn,
        `${name} has ${source[i]} at flat index ${i}, outside float32's range (±${kFloatMax})`,
      );
    }
  }
}

function fillNested(
  fn: string,
  name: string,
  input: unknown,
  shape: readonly number[],
  depth: number,
  path: string,
  out: Float32Array,
  offset: { i: number },
  acceptBooleans: boolean,
): void {
  if (depth === shape.length) {
    if (typeof input === 'number' || (acceptBooleans && typeof input === 'boolean')) {
      const value = Number(input);
      out[offset.i] = value;
      if (Number.isFinite(value) && !Number.isFinite(out[offset.i]!)) {
        fail(fn, `${name}${path} is ${value}, outside float32's range (±${kFloatMax})`);
      }
      offset.i++;
      return;
    }
    fail(fn, `${name}${path} must be a number, got ${describe(input)}`);
  }
  if (!Array.isArray(input) || input.length !== shape[depth]) {
    const got = Array.isArray(input) ? `${input.length} entries` : describe(input);
    fail(fn, `${name}${path} is ragged: expected ${shape[depth]} entries, got ${got}`);
  }
  for (let j = 0; j < input.length; j++) {
    fillNested(fn, name, input[j], shape, depth + 1, `${path}[${j}]`, out, offset, acceptBooleans);
  }
}

/** Flattens any accepted input to a Float32Array (no copy for a Float32Array). */
function flatten(
  fn: string,
  name: string,
  input: unknown,
  options: { acceptBooleans?: boolean } = {},
): Flat {
  let flat: Flat;
  const kind = typedArrayKind(input);
  if (kind === 'Float32Array') {
    flat = { data: honestView(input as Float32Array, Float32Array) };
  } else if (kind === 'Float64Array' || kind === 'Uint8Array') {
    const source =
      kind === 'Float64Array'
        ? honestView(input as Float64Array, Float64Array)
        : honestView(input as Uint8Array, Uint8Array);
    const data = new Float32Array(source.length);
    data.set(source);
    if (kind === 'Float64Array') checkFloatRange(fn, name, data, source);
    flat = { data };
  } else if (Array.isArray(input)) {
    if (input.length === 0) fail(fn, `${name} is empty`);
    const shape = nestingShape(fn, name, input);
    const data = new Float32Array(product(shape));
    fillNested(fn, name, input, shape, 0, '', data, { i: 0 }, options.acceptBooleans ?? false);
    flat = shape.length > 1 ? { data, nestedShape: shape } : { data };
  } else {
    const proxyHint =
      ArrayBuffer.isView(input) || input instanceof Float32Array
        ? ' (a Proxy or an object posing as one)'
        : '';
    fail(
      fn,
      `${name} must be a Float32Array or an array of numbers, got ${describe(input)}${proxyHint}`,
    );
  }
  if (flat.data.length === 0) fail(fn, `${name} is empty (or its buffer was detached)`);
  // NaN and infinities are left to the core, which rejects them naming the
  // argument and the index; checking here too would scan every input twice.
  return flat;
}

/** A tensor whose shape is given; the input's length must match it. */
export function shapedTensor(
  fn: string,
  name: string,
  input: unknown,
  shape: readonly number[],
): RawTensor {
  if (input === undefined || input === null) fail(fn, `${name} is required`);
  const { data } = flatten(fn, name, input);
  const needed = product(shape);
  if (data.length !== needed) {
    fail(fn, `${name} has ${data.length} values but shape ${formatShape(shape)} needs ${needed}`);
  }
  return { data, shape: [...shape] };
}

/**
 * The main input and its shape: `shape` if given (checked against the
 * length), else the nesting of `input`.
 */
export function inputTensor(
  fn: string,
  name: string,
  input: unknown,
  shape: unknown,
  ranks: readonly number[],
  expected: string,
): RawTensor {
  if (input === undefined || input === null) fail(fn, `${name} is required`);
  if (shape === undefined) {
    const flat = flatten(fn, name, input);
    const nested = flat.nestedShape ?? (Array.isArray(input) ? [flat.data.length] : undefined);
    if (!nested) fail(fn, `shape is required when ${name} is a flat typed array (${expected})`);
    const checked = checkShape(fn, `shape of ${name}`, nested, ranks, expected);
    return { data: flat.data, shape: checked };
  }
  return shapedTensor(fn, name, input, checkShape(fn, 'shape', shape, ranks, expected));
}

/**
 * A matrix with a known number of rows (e.g. wq has C rows): nested input
 * keeps its own shape (the core checks it), a flat one is split into rows.
 */
export function matrix(
  fn: string,
  name: string,
  input: unknown,
  rows: number,
  rowsLabel: string,
): RawTensor {
  if (input === undefined || input === null) fail(fn, `${name} is required`);
  const flat = flatten(fn, name, input);
  if (flat.nestedShape) return { data: flat.data, shape: flat.nestedShape };
  if (flat.data.length % rows !== 0) {
    fail(
      fn,
      `${name} has ${flat.data.length} values, not a multiple of ${rowsLabel}=${rows}; ` +
        `expected a row-major (${rowsLabel}, n) matrix`,
    );
  }
  return { data: flat.data, shape: [rows, flat.data.length / rows] };
}

/** An optional vector (a bias, gamma, beta): undefined stays absent. */
export function optionalVector(fn: string, name: string, input: unknown): RawTensor | undefined {
  if (input === undefined || input === null) return undefined;
  const flat = flatten(fn, name, input);
  return { data: flat.data, shape: flat.nestedShape ?? [flat.data.length] };
}

/** A mask tensor: explicit shape, nesting, or a shape inferred from the length. */
export function maskTensor(
  fn: string,
  name: string,
  input: unknown,
  shape: unknown,
  candidates: readonly (readonly number[])[],
): RawTensor {
  const flat = flatten(fn, name, input, { acceptBooleans: true });
  let resolved: number[];
  if (shape !== undefined) {
    resolved = checkShape(
      fn,
      `${name}Shape`,
      shape,
      [2, 3, 4],
      '(T, T), (B, T, T) or (B, H, T, T)',
    );
  } else if (flat.nestedShape) {
    resolved = flat.nestedShape;
  } else {
    const match = candidates.find((c) => product(c) === flat.data.length);
    if (!match) {
      fail(
        fn,
        `${name} has ${flat.data.length} values, which fits none of ` +
          `${candidates.map(formatShape).join(', ')}; pass ${name}Shape`,
      );
    }
    resolved = [...match];
  }
  if (product(resolved) !== flat.data.length) {
    fail(
      fn,
      `${name} has ${flat.data.length} values but ${name}Shape ${formatShape(resolved)} needs ${product(resolved)}`,
    );
  }
  return { data: flat.data, shape: resolved };
}

/** A boolean mask as 0/1 bytes. */
export function boolMaskTensor(
  fn: string,
  name: string,
  input: unknown,
  shape: unknown,
  candidates: readonly (readonly number[])[],
): RawBoolTensor {
  const t = maskTensor(fn, name, input, shape, candidates);
  const data = new Uint8Array(t.data.length);
  for (let i = 0; i < data.length; i++) {
    const value = t.data[i]!;
    if (value !== 0 && value !== 1)
      fail(fn, `${name} must hold booleans or 0/1, got ${value} at index ${i}`);
    data[i] = value;
  }
  return { data, shape: t.shape };
}

export type { TensorInput };
