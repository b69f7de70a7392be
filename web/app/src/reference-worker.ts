// Runs the double-precision reference off the main thread, so checking a 512-token,
// 16-head result never stalls the page.
import { compare, referenceSelfAttention, type ReferenceInput } from './reference';

export interface VerifyRequest {
  input: ReferenceInput;
  engine: {
    q: Float32Array;
    k: Float32Array;
    v: Float32Array;
    weights: Float32Array;
    concat: Float32Array;
  };
}

self.onmessage = (e: MessageEvent<VerifyRequest>) => {
  const start = performance.now();
  const ref = referenceSelfAttention(e.data.input);
  const t = e.data.engine;
  const rows: [string, ReturnType<typeof compare>][] = [
    ['queries Q', compare(t.q, ref.q)],
    ['keys K', compare(t.k, ref.k)],
    ['values V', compare(t.v, ref.v)],
    ['attention weights', compare(t.weights, ref.weights)],
    ['output (heads concatenated)', compare(t.concat, ref.concat)],
  ];
  self.postMessage({ rows, millis: performance.now() - start });
};
