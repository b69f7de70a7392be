// The calling convention of the engine (cpp/bindings/call.hpp): inputs are
// copied into wasm buffers and outputs out of them here, on the JS side, so
// no JavaScript runs while C++ code is on the stack. The call object owns
// every buffer and is deleted in `finally`: a JS exception at any step (a
// detached input, a failed copy out) frees all of it and reaches the caller
// as an AttnScopeError.
import type { AttnModule, RawBoolTensor, RawCall, RawTensor } from './attnscope.mjs';
import { AttnScopeError } from './errors.js';

/** Named inputs of one call; every value was normalised by the TS layer. */
export interface CallInputs {
  tensors?: Record<string, RawTensor | undefined>;
  bytes?: Record<string, RawBoolTensor | undefined>;
  /** Lists of non-negative integers (mask.lengths), already checked. */
  counts?: Record<string, readonly number[] | undefined>;
  numbers?: Record<string, number | boolean | undefined>;
  texts?: Record<string, string | undefined>;
}

/** A float output, copied out of wasm memory. */
export interface CallTensor {
  data: Float32Array;
  shape: number[];
}

/** Outputs nest by their dotted names: "trace.scores" is out.trace.scores. */
export type CallOutputs = { [name: string]: CallTensor | Uint8Array | number | CallOutputs };

const kFloat32 = 0;
const kUint8 = 1;

/** Bytes the inputs occupy in wasm memory. */
export function inputBytes(inputs: CallInputs): number {
  let bytes = 0;
  for (const t of Object.values(inputs.tensors ?? {})) if (t) bytes += t.data.length * 4;
  for (const t of Object.values(inputs.bytes ?? {})) if (t) bytes += t.data.length;
  for (const c of Object.values(inputs.counts ?? {})) if (c) bytes += c.length * 8;
  return bytes;
}

function shapeArgs(shape: readonly number[]): [number, number, number, number, number] {
  return [shape.length, shape[0] ?? 1, shape[1] ?? 1, shape[2] ?? 1, shape[3] ?? 1];
}

/** Checks an address a buffer request returned; 0 means it failed. */
function allocated(fn: string, call: RawCall, address: number): number {
  if (address === 0) throw new AttnScopeError(`${fn}: ${call.error()}`);
  return address;
}

function copyIn(fn: string, raw: AttnModule, call: RawCall, inputs: CallInputs): void {
  for (const [name, t] of Object.entries(inputs.tensors ?? {})) {
    if (!t) continue;
    const address = allocated(fn, call, call.tensor(name, ...shapeArgs(t.shape)));
    raw.HEAPF32.set(t.data, address / 4);
  }
  for (const [name, t] of Object.entries(inputs.bytes ?? {})) {
    if (!t) continue;
    const address = allocated(fn, call, call.bytes(name, ...shapeArgs(t.shape)));
    raw.HEAPU8.set(t.data, address);
  }
  for (const [name, c] of Object.entries(inputs.counts ?? {})) {
    if (!c) continue;
    const address = allocated(fn, call, call.counts(name, c.length));
    raw.HEAPF64.set(c, address / 8);
  }
  for (const [name, n] of Object.entries(inputs.numbers ?? {})) {
    if (n !== undefined) call.number(name, Number(n));
  }
  for (const [name, s] of Object.entries(inputs.texts ?? {})) {
    if (s !== undefined) call.text(name, s);
  }
}

function place(into: CallOutputs, path: string, value: CallOutputs[string]): void {
  const parts = path.split('.');
  let node = into;
  for (const part of parts.slice(0, -1)) {
    // Own properties only: an inherited `trace` (a polluted prototype) is not a node.
    if (!Object.prototype.hasOwnProperty.call(node, part)) node[part] = {};
    node = node[part] as CallOutputs;
  }
  node[parts[parts.length - 1]!] = value;
}

/**
 * Copies the outputs out of wasm memory, nested by their names; the output
 * named "output" goes into `out` when one is given (its size checked before).
 */
/**
 * The call's outputs, each array copied out of wasm memory (into `out` for
 * `output` when given), or with `views` each a view of the call's own
 * buffer, readable only until the call is deleted.
 */
function copyOut(
  raw: AttnModule,
  call: RawCall,
  out: Float32Array | undefined,
  views = false,
): CallOutputs {
  const names = call.outputNames().split('\n').slice(0, -1);
  const record = raw.kOutputRecord;
  const table = raw.HEAPF64.subarray(
    call.outputTable() / 8,
    call.outputTable() / 8 + names.length * record,
  );
  const result: CallOutputs = {};
  names.forEach((name, i) => {
    const at = i * record;
    const [type, address, size] = [table[at]!, table[at + 1]!, table[at + 2]!];
    if (type === kFloat32) {
      const begin = address / 4;
      const shape = Array.from(table.subarray(at + 5, at + 5 + table[at + 4]!));
      let data: Float32Array;
      if (name === 'output' && out) {
        out.set(raw.HEAPF32.subarray(begin, begin + size));
        data = out;
      } else {
        // A view of exactly the output, sliced whole: measured faster than
        // slicing a range of the whole heap view.
        data = new Float32Array(raw.HEAPF32.buffer, address, size);
        if (!views) data = data.slice();
      }
      place(result, name, { data, shape });
    } else if (type === kUint8) {
      const bytes = new Uint8Array(raw.HEAPU8.buffer, address, size);
      place(result, name, views ? bytes : bytes.slice());
    } else {
      place(result, name, table[at + 3]!);
    }
  });
  return result;
}

/** Runs `function_` on `inputs` in a new call, and `take` on it once it ran; then frees it. */
function withCall<T>(
  fn: string,
  raw: AttnModule,
  function_: string,
  inputs: CallInputs,
  take: (call: RawCall) => T,
): T {
  const call = new raw.Call();
  try {
    copyIn(fn, raw, call, inputs);
    const error = call.run(function_);
    if (error !== '') throw new AttnScopeError(error);
    return take(call);
  } finally {
    call.delete();
  }
}

/**
 * Runs the engine function `function` (a name of call.cpp's runners) on
 * `inputs`. Throws AttnScopeError for the core's errors, a failed buffer
 * request, and any exception on the way; nothing stays allocated.
 */
export function callEngine(
  fn: string,
  raw: AttnModule,
  function_: string,
  inputs: CallInputs,
  out?: Float32Array,
): CallOutputs {
  return withCall(fn, raw, function_, inputs, (call) => copyOut(raw, call, out));
}

/**
 * callEngine, handing `read` views of the outputs in wasm memory instead of
 * copies: for a caller that copies what it keeps into arrays of its own.
 * The views are valid only while `read` runs.
 */
export function callEngineReading<T>(
  fn: string,
  raw: AttnModule,
  function_: string,
  inputs: CallInputs,
  read: (views: CallOutputs) => T,
): T {
  return withCall(fn, raw, function_, inputs, (call) => read(copyOut(raw, call, undefined, true)));
}
