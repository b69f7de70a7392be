// Runs the double-precision reference off the main thread, so checking a 512-token,
// 16-head result never stalls the page.
import { compare, referenceSelfAttention, type ReferenceInput } from './reference';

export type WeightsSent = Pick<ReferenceInput, 'wq' | 'wk' | 'wv'>;

export interface VerifyRequest {
  input: Omit<ReferenceInput, keyof WeightsSent>;
  /** The projections, or null: the same as the last request's (panels/verified.ts). */
  weights: WeightsSent | null;
  engine: {
    q: Float32Array;
    k: Float32Array;
    v: Float32Array;
    weights: Float32Array;
    concat: Float32Array;
  };
}

let held: WeightsSent | null = null;

self.onmessage = (e: MessageEvent<VerifyRequest>) => {
  const start = performance.now();
  held = e.data.weights ?? held;
  if (!held) throw new Error('the reference check was sent no weights');
  const ref = referenceSelfAttention({ ...e.data.input, ...held });
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
