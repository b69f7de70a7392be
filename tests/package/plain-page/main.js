// The package straight from node_modules in the page, its module worker and a pool of them.
import { createAttnScope, hasRelaxedSimd } from 'attnscope';
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
const out = document.getElementById('result');

try {
  const engine = await createAttnScope();
  const page = engine.selfAttention(seed001);
  // The overrides resolve the same file by other routes; each must load it.
  const wasmUrl = new URL('./node_modules/attnscope/dist/attnscope.wasm', location.href);
  const bytes = new Uint8Array(await (await fetch(wasmUrl)).arrayBuffer());
  const located = [];
  for (const options of [
    { wasmUrl },
    { wasmUrl: wasmUrl.href },
    { locateFile: (name) => (located.push(name), wasmUrl.href) },
    { wasmBinary: bytes },
  ]) {
    const other = await createAttnScope(options);
    const w = other.selfAttention(seed001).output.data[0];
    if (Math.abs(w - page.output.data[0]) > 1e-7)
      throw new Error(`override ${Object.keys(options)} gave ${w}`);
  }
  const chosen = hasRelaxedSimd() ? 'attnscope-relaxed.wasm' : 'attnscope.wasm';
  if (located[0] !== chosen)
    throw new Error(`locateFile was asked for ${located[0]}, not ${chosen}`);
  const worker = createAttnScopeWorker({ wasmUrl });
  const inWorker = await worker.selfAttention(seed001);
  const defaultWorker = createAttnScopeWorker();
  const workerSimdArch = (await defaultWorker.ready).simdArch;
  defaultWorker.terminate();
  worker.terminate();
  // Two heads of seed 001, split across a pool of two workers.
  const pool = createAttnScopePool({ wasmUrl, workers: 2, minSplitFlops: 0 });
  const q = Float32Array.from([1, 0, 0, 1, 1, 0, 0, 1]);
  const v = Float32Array.from([1, 2, 3, 4, 1, 2, 3, 4]);
  const pooled = await pool.attention({ q, k: q, v, shape: [2, 2, 2], trace: false });
  pool.terminate();
  out.textContent = JSON.stringify({
    relaxed: hasRelaxedSimd(),
    simdArch: engine.simdArch,
    workerSimdArch,
    page: Array.from(page.output.data),
    worker: Array.from(inWorker.output.data),
    pool: Array.from(pooled.output.data),
    tokens: gpt2Tokenizer.encode('Hello world'),
  });
} catch (e) {
  out.textContent = `error: ${e instanceof Error ? e.message : String(e)}`;
}
out.dataset.done = '1';
