// engine.attention({ trace: false, logSumExp: true }) and
// engine.attentionBackward given that forward's output and logSumExp: the
// log-sum-exp against a double computation, the gradients equal to the
// backward that runs its own forward bit for bit (masks, grouped heads, a
// key/value cache, rope, ALiBi, ranks 2 to 4), the pool's split call giving
// the engine's logSumExp, and bad input rejected by name with memory unchanged.
import assert from 'node:assert/strict';
import { after, test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import { createAttnScopePool } from 'attnscope/worker';
import { engine } from './engine.mjs';
import { rng } from './support.mjs';

// threads: 1: single-thread workers that split the call (as variants-pool.test.mjs).
const pool = createAttnScopePool({ workers: 2, minSplitFlops: 0, threads: 1 });
after(() => pool.terminate());

const bits = (x) => new Uint32Array(x.buffer, x.byteOffset, x.length);

/** q (…, H, Tq, d), k and v (…, Hkv, Tk, d / dv), dOutput, with their shapes (no B when B = 0). */
function problem(seed, { B, H, Hkv = H, Tq, Tk = Tq, d, dv = d }) {
  const r = rng(seed);
  const lead = B ? [B] : [];
  const batch = B || 1;
  return {
    q: r.floats(batch * H * Tq * d),
    k: r.floats(batch * Hkv * Tk * d),
    v: r.floats(batch * Hkv * Tk * dv),
    dOutput: r.floats(batch * H * Tq * dv),
    shape: [...lead, H, Tq, d],
    kvShape: [...lead, Hkv, Tk, d],
    dv,
  };
}

const cases = [
  ['one query', { B: 2, H: 2, Tq: 1, d: 4 }, {}],
  ['causal, around the tiles', { B: 2, H: 2, Tq: 65, d: 8 }, { mask: 'causal' }],
  [
    'padding with a fully masked sequence',
    { B: 2, H: 2, Tq: 17, d: 4 },
    { mask: { causal: true, lengths: [9, 0] } },
  ],
  [
    'grouped heads, a key/value cache, a window with sinks',
    { B: 2, H: 4, Hkv: 2, Tq: 9, Tk: 70, d: 8, dv: 5 },
    { mask: { causal: true, window: 6, sinks: 2 } },
  ],
  ['rope and ALiBi', { B: 1, H: 4, Tq: 33, d: 8 }, { rope: { base: 100 }, bias: 'alibi' }],
  ['rank 2, a custom scale', { H: 1, Tq: 130, d: 4 }, { scale: 0.3, mask: 'causal' }],
];

for (const [name, dims, options] of cases) {
  test(`attentionBackward from the saved forward gives its own forward's bits: ${name}`, () => {
    const p = problem(name.length, dims);
    if (!dims.B) {
      // Rank 2 (one head): no H either.
      p.shape = p.shape.slice(1);
      p.kvShape = p.kvShape.slice(1);
    }
    const { dOutput, ...args } = p;
    const forward = engine.attention({ ...args, ...options, trace: false, logSumExp: true });
    assert.deepEqual(forward.logSumExp.shape, p.shape.slice(0, -1));
    const own = engine.attentionBackward({ ...p, ...options, trace: false });
    const saved = engine.attentionBackward({
      ...p,
      ...options,
      trace: false,
      output: forward.output.data,
      logSumExp: forward.logSumExp.data,
    });
    for (const g of ['dq', 'dk', 'dv']) {
      assert.deepEqual(saved[g].shape, own[g].shape);
      assert.deepEqual(bits(saved[g].data), bits(own[g].data), g);
    }
  });
}

test("logSumExp: log Σ exp of each query's masked scores; -Infinity when fully masked", () => {
  const [B, H, T, d] = [2, 1, 20, 4];
  const p = problem(5, { B, H, Tq: T, d });
  const lengths = [T, 0];
  const { logSumExp } = engine.attention({
    ...p,
    mask: { causal: true, lengths },
    trace: false,
    logSumExp: true,
  });
  const scale = 1 / Math.sqrt(d);
  for (let b = 0; b < B; b++) {
    for (let i = 0; i < T; i++) {
      const scores = [];
      for (let j = 0; j <= i && j < lengths[b]; j++) {
        let dot = 0;
        for (let e = 0; e < d; e++) dot += p.q[(b * T + i) * d + e] * p.k[(b * T + j) * d + e];
        scores.push(scale * dot);
      }
      const got = logSumExp.data[b * T + i];
      if (scores.length === 0) {
        assert.equal(got, -Infinity, `query ${b},${i}`);
        continue;
      }
      const top = Math.max(...scores);
      const want = top + Math.log(scores.reduce((s, x) => s + Math.exp(x - top), 0));
      assert.ok(
        Math.abs(got - want) < 1e-5 * (1 + Math.abs(want)),
        `query ${b},${i}: ${got} vs ${want}`,
      );
    }
  }
});

test("a pool's split call returns the engine's logSumExp bit for bit", async () => {
  const { dOutput: _unused, ...args } = problem(9, { B: 1, H: 4, Hkv: 2, Tq: 40, d: 8 });
  const call = { ...args, mask: 'causal', trace: false, logSumExp: true };
  const split = await pool.attention(call);
  const whole = engine.attention(call);
  assert.deepEqual(split.logSumExp.shape, whole.logSumExp.shape);
  assert.deepEqual(bits(split.logSumExp.data), bits(whole.logSumExp.data));
  assert.deepEqual(bits(split.output.data), bits(whole.output.data));
});

test('a bad saved forward is rejected by name, and memory stays as it was', () => {
  const p = problem(3, { B: 1, H: 2, Tq: 5, d: 4 });
  const { dOutput: _unused, ...args } = p;
  const forward = engine.attention({ ...args, trace: false, logSumExp: true });
  const output = forward.output.data,
    logSumExp = forward.logSumExp.data;
  const before = engine.memoryUsage().heapInUse;
  const throwsNamed = (f, pattern) =>
    assert.throws(
      f,
      (e) => e instanceof AttnScopeError && pattern.test(e.message),
      String(pattern),
    );
  const backward = (extra) => () =>
    engine.attentionBackward({ ...p, trace: false, output, logSumExp, ...extra });
  throwsNamed(
    () => engine.attention({ ...args, logSumExp: true }),
    /^attention: logSumExp comes from the fast path: pass trace: false/,
  );
  throwsNamed(
    () => engine.attention({ ...args, trace: false, logSumExp: 1 }),
    /^attention: logSumExp must be a boolean/,
  );
  throwsNamed(
    backward({ trace: true }),
    /^attentionBackward: output and logSumExp are the fast path's forward: pass trace: false/,
  );
  throwsNamed(
    () => engine.attentionBackward({ ...p, trace: false, output }),
    /^attentionBackward: output is given without logSumExp/,
  );
  throwsNamed(
    () => engine.attentionBackward({ ...p, trace: false, logSumExp }),
    /^attentionBackward: logSumExp is given without output/,
  );
  throwsNamed(
    backward({ output: output.subarray(1) }),
    /^attentionBackward: output has 39 values but shape \[1, 2, 5, 4\] needs 40/,
  );
  throwsNamed(
    backward({ logSumExp: new Float32Array(11) }),
    /^attentionBackward: logSumExp has 11 values but shape \[1, 2, 5\] needs 10/,
  );
  const nanOutput = output.slice();
  nanOutput[6] = NaN;
  throwsNamed(
    backward({ output: nanOutput }),
    /^attentionBackward: output has a non-finite value \(NaN\) at flat index 6/,
  );
  for (const bad of [NaN, Infinity]) {
    const lse = logSumExp.slice();
    lse[2] = bad;
    throwsNamed(
      backward({ logSumExp: lse }),
      /^attentionBackward: logSumExp has a non-finite value \((NaN|\+inf)\) at flat index 2/,
    );
  }
  assert.equal(engine.memoryUsage().heapInUse, before);
  // Still usable: -Infinity (a fully masked query) is accepted, and its gradient is zero.
  const lse = logSumExp.slice();
  lse[2] = -Infinity;
  const g = backward({ logSumExp: lse })();
  assert.deepEqual([...g.dq.data.subarray(8, 12)], [0, 0, 0, 0]);
});
