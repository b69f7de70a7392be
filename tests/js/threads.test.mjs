// The threaded build through the package: createAttnScope({ threads }) gives
// the single-thread build's results bit for bit for every mask and variant,
// with 2, 3 and every hardware thread; many concurrent calls through a
// threaded pool; bad `threads` values are clear AttnScopeErrors. Where the
// engine has relaxed SIMD, the threaded relaxed build against the relaxed one.
import assert from 'node:assert/strict';
import { availableParallelism } from 'node:os';
import { test } from 'node:test';

import { AttnScopeError, createAttnScope, hasRelaxedSimd } from 'attnscope';
import { createAttnScopePool } from 'attnscope/worker';
import { rng } from './support.mjs';

const single = await createAttnScope({ threads: 1, simd: 'simd128' });
const counts = [...new Set([2, 3, availableParallelism()])];
const threaded = await Promise.all(
  counts.map((threads) => createAttnScope({ threads, simd: 'simd128' })),
);

/** Attention arguments for dims and a variant, seeded. */
function make(seed, { B, H, Hkv, Tq, Tk, d }, variant) {
  const r = rng(seed);
  const args = {
    q: r.floats(B * H * Tq * d),
    k: r.floats(B * Hkv * Tk * d),
    v: r.floats(B * Hkv * Tk * d),
    shape: [B, H, Tq, d],
    kvShape: [B, Hkv, Tk, d],
    trace: false,
  };
  const masks = {
    causal: 'causal',
    padding: { lengths: Array.from({ length: B }, () => Math.ceil((2 * Tk) / 3)) },
    additive: { additive: r.floats(Tq * Tk, -2, 2), additiveShape: [Tq, Tk] },
    boolean: {
      allowed: Uint8Array.from(r.floats(Tq * Tk), (x) => (x > -0.4 ? 1 : 0)),
      allowedShape: [Tq, Tk],
    },
    window: { window: Math.floor(Tk / 5) + 1 },
    sinks: { causal: true, window: Math.floor(Tk / 5) + 1, sinks: 3 },
  };
  if (masks[variant]) args.mask = masks[variant];
  if (variant === 'rope') args.rope = { base: 10000 };
  if (variant === 'alibi') args.bias = 'alibi';
  return args;
}

const variants = [
  'none',
  'causal',
  'padding',
  'additive',
  'boolean',
  'window',
  'sinks',
  'rope',
  'alibi',
];
// One head at T = 256 (split by query blocks only), GQA, MQA with a KV cache
// (Tq < Tk), a decode step (Tq = 1), lengths off the 16-row tiles.
const shapes = [
  { B: 1, H: 1, Hkv: 1, Tq: 256, Tk: 256, d: 64 },
  { B: 2, H: 4, Hkv: 2, Tq: 130, Tk: 130, d: 16 },
  { B: 1, H: 4, Hkv: 1, Tq: 37, Tk: 300, d: 8 },
  { B: 1, H: 8, Hkv: 2, Tq: 1, Tk: 70, d: 16 },
  { B: 3, H: 2, Hkv: 2, Tq: 17, Tk: 17, d: 32 },
];

const bits = (f) => Buffer.from(f.buffer, f.byteOffset, f.byteLength);

test('engine.threads reports the build in use', () => {
  assert.equal(single.threads, 1);
  threaded.forEach((engine, i) => assert.equal(engine.threads, counts[i]));
  for (const engine of threaded) assert.equal(engine.simdArch, single.simdArch);
});

test('threaded attention equals the single-thread build bit for bit, every mask and variant', () => {
  let seed = 1;
  for (const dims of shapes) {
    for (const variant of variants) {
      const args = make(seed++, dims, variant);
      const expected = single.attention(args);
      for (const [i, engine] of threaded.entries()) {
        const r = engine.attention(args);
        assert.deepEqual(r.output.shape, expected.output.shape);
        assert.ok(
          bits(r.output.data).equals(bits(expected.output.data)),
          `${variant} ${JSON.stringify(dims)} on ${counts[i]} threads`,
        );
      }
    }
  }
});

test('threaded self-attention (causal, GQA) equals the single-thread build bit for bit', () => {
  const r = rng(99);
  const [T, C, H, d] = [150, 32, 4, 8];
  const args = {
    x: r.floats(2 * T * C),
    shape: [2, T, C],
    wq: r.floats(C * H * d),
    wk: r.floats(C * H * d),
    wv: r.floats(C * H * d),
    heads: H,
    mask: 'causal',
    trace: false,
  };
  const expected = single.selfAttention(args).output.data;
  for (const engine of threaded)
    assert.ok(bits(engine.selfAttention(args).output.data).equals(bits(expected)));
});

test("bad values on the fast path, checked on the threads, give the traced call's error and leak nothing", () => {
  // Flash-path shapes (more than 16 rows per key/value head): q, k and v are
  // scanned by the packing step's tasks, on every thread, not before the call.
  const dims = { B: 2, H: 4, Hkv: 2, Tq: 40, Tk: 40, d: 16 };
  const at = (x, i, value) => Object.assign(Float32Array.from(x), { [i]: value });
  const filled = (x, value) => new Float32Array(x.length).fill(value);
  const base = make(31, dims, 'none');
  const last = base.q.length - 1;
  const cases = {
    'NaN in q': [(a) => ({ ...a, q: at(a.q, last, NaN) }), /q has a non-finite value \(NaN\)/],
    '+inf in k': [
      (a) => ({ ...a, k: at(a.k, 700, Infinity) }),
      /k has .*\(\+inf\) at flat index 700/,
    ],
    '-inf in v': [(a) => ({ ...a, v: at(a.v, 5, -Infinity) }), /v has .*\(-inf\) at flat index 5 /],
    'NaN in v and in k, k named first': [
      (a) => ({ ...a, k: at(a.k, a.k.length - 1, NaN), v: at(a.v, 0, NaN) }),
      /: k has a non-finite/,
    ],
    'inf in k and in q, q named first': [
      (a) => ({ ...a, q: at(a.q, last, NaN), k: at(a.k, 0, Infinity) }),
      /: q has a non-finite/,
    ],
    'scores beyond float': [
      (a) => ({ ...a, q: filled(a.q, 4e18), k: filled(a.k, 4e18), scale: 100 }),
      /scores of batch 0, head 0 may reach/,
    ],
    'key sums beyond float': [
      (a) => ({ ...a, q: filled(a.q, 1e19), k: filled(a.k, 1e20) }),
      /may reach/,
    ],
    'NaN in v and scores beyond float, v named first': [
      (a) => ({ ...a, q: filled(a.q, 1e19), k: filled(a.k, 1e20), v: at(a.v, 9, NaN) }),
      /: v has a non-finite value \(NaN\) at flat index 9 /,
    ],
    // The core checks the mask after the inputs' values.
    'NaN in k and +inf in the additive mask, k named first': [
      (a) => ({
        ...a,
        k: at(a.k, 2, NaN),
        mask: { additive: at(new Float32Array(40 * 40), 1, Infinity), additiveShape: [40, 40] },
      }),
      /: k has .*\(NaN\) at flat index 2 /,
    ],
    'NaN in k with logSumExp': [
      (a) => ({ ...a, k: at(a.k, 3, NaN), logSumExp: true }),
      /: k has .*\(NaN\) at flat index 3 /,
    ],
  };
  for (const [name, [change, pattern]] of Object.entries(cases)) {
    const args = change(base);
    const traced = { ...args, trace: true, logSumExp: undefined };
    let expected;
    assert.throws(
      () => single.attention(traced),
      (e) => ((expected = e.message), true),
    );
    assert.match(expected, pattern, name);
    for (const engine of [single, ...threaded]) {
      const before = engine.memoryUsage().heapInUse;
      assert.throws(
        () => engine.attention(args),
        (e) => e instanceof AttnScopeError && e.message === expected,
        `${name} on ${engine.threads} threads: expected "${expected}"`,
      );
      assert.equal(engine.memoryUsage().heapInUse, before, `${name}: heap in use`);
    }
  }
});

test('many concurrent calls through a threaded pool equal the single-thread build', async () => {
  const pool = createAttnScopePool({ workers: 2, simd: 'simd128' });
  try {
    const info = await pool.ready;
    assert.equal(info.workers, 1);
    assert.equal(info.threads, 2);
    const calls = Array.from({ length: 40 }, (_, i) =>
      make(1000 + i, shapes[i % shapes.length], variants[i % variants.length]),
    );
    const results = await Promise.all(calls.map((args) => pool.attention(args)));
    results.forEach((r, i) =>
      assert.ok(
        bits(r.output.data).equals(bits(single.attention(calls[i]).output.data)),
        `call ${i}`,
      ),
    );
  } finally {
    pool.terminate();
  }
});

test('bad threads values are AttnScopeErrors naming threads, and loading still works after', async () => {
  const bad = [
    [0, /threads must be from 1 to 256, got 0/],
    [-2, /threads must be from 1 to 256, got -2/],
    [257, /threads must be from 1 to 256, got 257/],
    [1.5, /threads must be "auto" or an integer from 1 to 256, got 1.5/],
    [Number.NaN, /threads must be "auto" or an integer from 1 to 256, got NaN/],
    ['4', /threads must be "auto" or an integer from 1 to 256, got "4"/],
    [null, /threads must be "auto" or an integer from 1 to 256, got null/],
  ];
  for (const [threads, message] of bad) {
    await assert.rejects(createAttnScope({ threads }), (e) => {
      assert.ok(e instanceof AttnScopeError, String(e));
      assert.match(e.message, message);
      return true;
    });
  }
  assert.equal((await createAttnScope({ threads: 2 })).threads, 2);
});

test('threads: 1 loads a single-thread build, "auto" the threaded one in Node', async () => {
  assert.equal((await createAttnScope({ threads: 1 })).threads, 1);
  assert.equal(
    (await createAttnScope({ simd: 'simd128', threads: 'auto' })).threads,
    Math.min(8, availableParallelism()),
  );
});

test(
  'the threaded relaxed build equals the relaxed build bit for bit',
  { skip: !hasRelaxedSimd() && 'this engine has no relaxed SIMD' },
  async () => {
    const relaxed = await createAttnScope({ threads: 1, simd: 'relaxed' });
    const relaxedThreaded = await createAttnScope({ threads: 2, simd: 'relaxed' });
    assert.equal(relaxedThreaded.threads, 2);
    assert.equal(relaxedThreaded.simdArch, relaxed.simdArch);
    assert.match(relaxed.simdArch, /relaxed/);
    let seed = 500;
    for (const dims of shapes) {
      for (const variant of variants) {
        const args = make(seed++, dims, variant);
        assert.ok(
          bits(relaxedThreaded.attention(args).output.data).equals(
            bits(relaxed.attention(args).output.data),
          ),
          `${variant} ${JSON.stringify(dims)}`,
        );
      }
    }
    // "auto" takes the relaxed build and the threads together where both can run.
    const auto = await createAttnScope();
    assert.equal(auto.simdArch, relaxed.simdArch);
    assert.equal(auto.threads, Math.min(8, availableParallelism()));
  },
);
test('a threaded GPT-2 forward, generation and training step equal the single-thread build bit for bit', () => {
  // Big enough for every split in the core (matmul blocks, decode products, LM head, heads).
  const config = { layers: 2, heads: 6, dModel: 192, vocabSize: 1000, contextLength: 64 };
  const tokens = Array.from({ length: 40 }, (_, i) => (i * 7919 + 1) % config.vocabSize);
  const batch = Array.from({ length: 2 * 33 }, (_, i) => (i * 104729 + 5) % config.vocabSize);
  const run = (engine) => {
    const model = engine.createModel({ ...config, seed: 7 });
    try {
      const fast = model.forward({ tokens, trace: false });
      const traced = model.forward({ tokens, trace: true });
      const generated = model.generate({
        tokens: tokens.slice(0, 20),
        maxNewTokens: 12,
        temperature: 1,
        topK: 50,
        seed: 3,
      });
      const loss = model
        .trainer({ lr: 1e-2, clip: 1 })
        .step({ tokens: batch, shape: [2, 33] }).loss;
      return {
        logits: bits(fast.logits.data),
        traced: bits(traced.logits.data),
        attentions: traced.attentions.map((a) => bits(a.data)),
        generated: generated.tokens,
        loss,
        weights: bits(model.save()),
      };
    } finally {
      model.dispose();
    }
  };
  const expected = run(single);
  for (const [i, engine] of threaded.entries()) {
    const got = run(engine);
    for (const key of Object.keys(expected))
      assert.deepEqual(got[key], expected[key], `${counts[i]} threads: ${key}`);
  }
});
