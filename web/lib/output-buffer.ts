// `attention`'s `out`: a caller's Float32Array that receives the output
// instead of a new array. The engine checks it before computing and the
// bindings write into it; the worker and the pool keep it on the calling side
// (a structured clone would fill a copy) and fill it when the result arrives.
import { describe, fail, formatShape, product } from './tensors.js';
import type { AttentionArgs, AttentionResult } from './types.js';

/** `out` as a Float32Array, failing unless it is one (undefined stays undefined). */
export function outputArray(fn: string, out: unknown): Float32Array | undefined {
  if (out === undefined) return undefined;
  if (!(out instanceof Float32Array)) fail(fn, `out must be a Float32Array, got ${describe(out)}`);
  return out;
}

/** `out` checked to hold exactly an output of `shape`. */
export function outputBuffer(fn: string, out: unknown, shape: readonly number[]): Float32Array | undefined {
  const array = outputArray(fn, out);
  const length = product(shape);
  if (array && array.length !== length)
    fail(fn, `out has ${array.length} elements, but the output ${formatShape(shape)} has ${length}`);
  return array;
}

/** `result` with its output copied into `out`, or unchanged when there is no `out`. */
export function intoOutputBuffer(fn: string, result: AttentionResult, out: Float32Array | undefined): AttentionResult {
  const buffer = outputBuffer(fn, out, result.output.shape);
  if (!buffer) return result;
  buffer.set(result.output.data);
  return { ...result, output: { data: buffer, shape: result.output.shape } };
}

/**
 * Runs an `attention` call whose `out` stays on the calling side: the call
 * goes without it and the result is copied into it on arrival.
 */
export async function keepingOutputBuffer(
  args: AttentionArgs,
  run: (args: AttentionArgs) => Promise<AttentionResult>,
): Promise<AttentionResult> {
  if (typeof args !== 'object' || args === null || args.out === undefined) return run(args);
  const { out, ...rest } = args;
  const buffer = outputArray('attention', out);
  return intoOutputBuffer('attention', await run(rest), buffer);
}
