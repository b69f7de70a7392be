// The `out` of `attention` and `linear`: a caller's Float32Array that receives
// the output instead of a new array. The engine checks it before computing and
// the bindings write into it; the worker and the pool keep it on the calling
// side (a structured clone would fill a copy) and fill it when the result
// arrives.
import { describe, fail, formatShape, honestFloat32Array, own, product } from './tensors.js';
import type { AttentionArgs, AttentionResult, LinearArgs, TensorOut } from './types.js';

/**
 * A view of `out`, failing unless it is a real Float32Array (undefined stays
 * undefined). The view's length is the array's own, whatever an own `length`
 * property on `out` claims; the output is written through it.
 */
export function outputArray(fn: string, out: unknown): Float32Array | undefined {
  if (out === undefined) return undefined;
  const view = honestFloat32Array(out);
  if (!view) fail(fn, `out must be a Float32Array, got ${describe(out)}`);
  return view;
}

/** `out` checked to hold exactly an output of `shape`. */
export function outputBuffer(
  fn: string,
  out: unknown,
  shape: readonly number[],
): Float32Array | undefined {
  const array = outputArray(fn, out);
  const length = product(shape);
  if (array && array.length !== length)
    fail(
      fn,
      `out has ${array.length} elements, but the output ${formatShape(shape)} has ${length}`,
    );
  return array;
}

/**
 * Runs a call whose `out` stays on the calling side: the call goes without
 * it, and the output that `outputOf` picks from the result is copied into it
 * on arrival (`withOutput` puts it back).
 */
async function keepingOut<Args extends { out?: Float32Array }, Result>(
  fn: string,
  args: Args,
  run: (args: Args) => Promise<Result>,
  outputOf: (result: Result) => TensorOut,
  withOutput: (result: Result, output: TensorOut) => Result,
): Promise<Result> {
  const out = own(args, 'out') as Float32Array | undefined;
  if (out === undefined) return run(args);
  const { out: _, ...rest } = args;
  const array = outputArray(fn, out);
  const result = await run(rest as Args);
  const output = outputOf(result);
  outputBuffer(fn, array, output.shape)!.set(output.data);
  return withOutput(result, { data: out, shape: output.shape });
}

/** `attention` on a worker with its `out` on the calling side. */
export function keepingAttentionOutput(
  args: AttentionArgs,
  run: (args: AttentionArgs) => Promise<AttentionResult>,
): Promise<AttentionResult> {
  return keepingOut(
    'attention',
    args,
    run,
    (result) => result.output,
    (result, output) => ({
      ...result,
      output,
    }),
  );
}

/** `linear` on a worker with its `out` on the calling side. */
export function keepingLinearOutput(
  args: LinearArgs,
  run: (args: LinearArgs) => Promise<TensorOut>,
): Promise<TensorOut> {
  return keepingOut(
    'linear',
    args,
    run,
    (result) => result,
    (_, output) => output,
  );
}
