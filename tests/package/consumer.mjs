// Runs in an empty directory where only the packed tarball is installed:
// the package must work from node_modules with nothing else around.
import assert from 'node:assert/strict';

import { AttnScopeError, createAttnScope, version } from 'attnscope';
import { selfAttentionReference } from 'attnscope/reference';
import { gpt2Tokenizer } from 'attnscope/tokenizer';
import { createAttnScopePool, createAttnScopeWorker } from 'attnscope/worker';

const I2 = [
  [1, 0],
  [0, 1],
];
const seed001 = {
  x: I2,
  wq: I2,
  wk: I2,
  wv: [
    [1, 2],
    [3, 4],
  ],
};
const expected = [1.660477, 2.660477, 2.339523, 3.339523];
const near = (got) => got.every((v, i) => Math.abs(v - expected[i]) < 1e-6);

const t0 = performance.now();
const engine = await createAttnScope();
const r = engine.selfAttention(seed001);
const coldMs = performance.now() - t0;
assert.ok(near([...r.output.data]), `seed 001 output ${[...r.output.data]}`);
assert.equal(engine.version, version);
// The shipped reference gives the same numbers in double precision.
const flat = (m) => m.flat();
const ref = selfAttentionReference({
  x: flat(I2),
  B: 1,
  T: 2,
  C: 2,
  wq: flat(I2),
  wk: flat(I2),
  wv: [1, 2, 3, 4],
  heads: 1,
  factor: Math.SQRT1_2,
});
assert.ok(near([...ref.output]), `attnscope/reference output ${[...ref.output]}`);
assert.throws(() => engine.selfAttention({ ...seed001, heads: 0 }), AttnScopeError);

const worker = createAttnScopeWorker();
try {
  const w = await worker.selfAttention(seed001);
  assert.ok(near([...w.output.data]), 'seed 001 through the worker');
} finally {
  worker.terminate();
}

// The pool from node_modules: its workers load the wasm from the installed package.
const pool = createAttnScopePool({ workers: 2, minSplitFlops: 0 });
try {
  const [H, T, d] = [4, 16, 8];
  const q = Float32Array.from({ length: H * T * d }, (_, i) => Math.sin(i));
  const args = {
    q,
    k: q.map((x) => -x),
    v: q.map((x) => x * x),
    shape: [H, T, d],
    mask: 'causal',
    trace: false,
  };
  assert.deepEqual(await pool.attention(args), engine.attention(args), 'pool equals the engine');
  // In Node the pool runs as one worker whose engine has the threaded build on 2 threads.
  const { workers, threads } = await pool.ready;
  assert.deepEqual({ workers, threads }, { workers: 1, threads: 2 });
} finally {
  pool.terminate();
}
// GPT-2's tokenizer, with its vocabulary, from the installed package's dependency.
assert.deepEqual(gpt2Tokenizer.encode('Hello world'), [15496, 995]);
assert.equal(gpt2Tokenizer.decode([15496, 995]), 'Hello world');
assert.equal(
  gpt2Tokenizer
    .pieces(' 🙂')
    .map((p) => p.text)
    .join(''),
  ' 🙂',
);

console.log(
  `consumer: seed 001 ok (engine ${engine.version}, ${engine.simdArch}; cold load to first result ${coldMs.toFixed(1)} ms)`,
);
