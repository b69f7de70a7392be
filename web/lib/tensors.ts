// Turning user input (typed arrays, plain or nested arrays, shapes) into the
// flat row-major tensors the bindings take. Only cheap checks live here —
// types, lengths against shapes, positive sizes; the core checks the rest
// (values included) and its messages pass through unchanged.
import type { RawBoolTensor, RawTensor } from './attnscope.mjs';
import { AttnScopeError } from './errors.js';
import type { TensorInput } from './types.js';

/** Throws an AttnScopeError prefixed with the API function's name. */
export function fail(fn: string, message: string): never {
  throw new AttnScopeError(`${fn}: ${message}`);
}

/** How an unexpected value is named in error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (ArrayBuffer.isView(value)) return value.constructor.name;
  return typeof value;
}

export function formatShape(shape: readonly number[]): string {
  return `[${shape.join(', ')}]`;
}

export function product(shape: readonly number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

/** A positive integer argument such as `heads` or `hidden`. */
export function positiveInt(fn: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    fail(
      fn,
      `${name} must be a positive integer, got ${typeof value === 'number' ? value : describe(value)}`,
    );
  }
  return value;
}

/** A finite number argument such as `eps` or `base`. */
export function finiteNumber(fn: string, name: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    fail(fn, `${name} must be a finite number, got ${typeof value === 'number' ? value : describe(value)}`);
  }
  return value;
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
    fail(fn, `${name} must be ${expected}, got rank ${shape.length} ${formatShape(shape as number[])}`);
  }
  shape.forEach((d: unknown, i: number) => {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 1) {
      fail(fn, `${name}[${i}] must be a positive integer, got ${typeof d === 'number' ? d : describe(d)}`);
    }
  });
  return [...(shape as number[])];
}

interface Flat {
  data: Float32Array;
  /** Set when the input was a nested array: the shape its nesting gives. */
  nestedShape?: number[];
}

/** Shape given by the nesting of plain arrays, following first elements. */
function nestingShape(fn: string, name: string, input: readonly unknown[]): number[] {
  const shape: number[] = [];
  let level: unknown = input;
  while (Array.isArray(level)) {
    if (level.length === 0) fail(fn, `${name} has an empty dimension at depth ${shape.length}`);
    shape.push(level.length);
    level = level[0];
  }
  return shape;
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
      out[offset.i++] = Number(input);
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
function flatten(fn: string, name: string, input: unknown, options: { acceptBooleans?: boolean } = {}): Flat {
  let flat: Flat;
  if (input instanceof Float32Array) {
    flat = { data: input };
  } else if (input instanceof Float64Array || input instanceof Uint8Array) {
    flat = { data: Float32Array.from(input) };
  } else if (Array.isArray(input)) {
    if (input.length === 0) fail(fn, `${name} is empty`);
    const shape = nestingShape(fn, name, input);
    const data = new Float32Array(product(shape));
    fillNested(fn, name, input, shape, 0, '', data, { i: 0 }, options.acceptBooleans ?? false);
    flat = shape.length > 1 ? { data, nestedShape: shape } : { data };
  } else {
    fail(fn, `${name} must be a Float32Array or an array of numbers, got ${describe(input)}`);
  }
  if (flat.data.length === 0) fail(fn, `${name} is empty`);
  // NaN and infinities are left to the core, which rejects them naming the
  // argument and the index; checking here too would scan every input twice.
  return flat;
}

/** A tensor whose shape is given; the input's length must match it. */
export function shapedTensor(fn: string, name: string, input: unknown, shape: readonly number[]): RawTensor {
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
export function matrix(fn: string, name: string, input: unknown, rows: number, rowsLabel: string): RawTensor {
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
    resolved = checkShape(fn, `${name}Shape`, shape, [2, 3, 4], '(T, T), (B, T, T) or (B, H, T, T)');
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
    if (value !== 0 && value !== 1) fail(fn, `${name} must hold booleans or 0/1, got ${value} at index ${i}`);
    data[i] = value;
  }
  return { data, shape: t.shape };
}

export type { TensorInput };
