// Test utilities of the package's tests: seeded inputs and a closeness check.
// The double-precision reference they compare with is the package's own
// attnscope/reference.
import assert from 'node:assert/strict';
import { mulberry32 } from 'attnscope/reference';

/** Deterministic uniform numbers from a seed: next() in [0, 1), floats in [lo, hi), ints in [lo, hi]. */
export function rng(seed) {
  const next = mulberry32(seed);
  return {
    next,
    floats(n, lo = -1, hi = 1) {
      const out = new Float32Array(n);
      for (let i = 0; i < n; i++) out[i] = lo + (hi - lo) * next();
      return out;
    },
    int(lo, hi) {
      return lo + Math.floor(next() * (hi - lo + 1));
    },
  };
}

/** The index of the largest of data[from .. from + count), the first on ties, counted from `from`. */
export function argmax(data, from, count) {
  let best = 0;
  for (let i = 1; i < count; i++) if (data[from + i] > data[from + best]) best = i;
  return best;
}

/** Asserts |actual − expected| ≤ atol + rtol·|expected| element-wise (equal infinities pass). */
export function assertClose(actual, expected, { atol = 2e-5, rtol = 2e-5, what = 'value' } = {}) {
  assert.equal(actual.length, expected.length, `${what}: length`);
  for (let i = 0; i < expected.length; i++) {
    const a = actual[i];
    const e = expected[i];
    if (a === e) continue;
    const ok = Math.abs(a - e) <= atol + rtol * Math.abs(e);
    if (!ok) assert.fail(`${what}[${i}]: got ${a}, expected ${e}`);
  }
}

/** The 2 × 2 identity. */
export const I2 = [
  [1, 0],
  [0, 1],
];

/** The tutorials' first worked example: X = W_Q = W_K = I, W_V = [[1, 2], [3, 4]]. */
export const seed001 = {
  x: I2,
  wq: I2,
  wk: I2,
  wv: [
    [1, 2],
    [3, 4],
  ],
};

/** Two heads over a W_Q of width 3: the core refuses it (the width is not a multiple of heads). */
export const headsNotDividingWidth = {
  x: I2,
  wq: [
    [1, 0, 0],
    [0, 1, 0],
  ],
  wk: I2,
  wv: I2,
  heads: 2,
};
