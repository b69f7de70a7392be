// A minimal consumer: the package from node_modules, in the page and in its worker.
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
const out = document.getElementById('result')!;

async function main(): Promise<void> {
  const engine = await createAttnScope();
  const page = engine.selfAttention(seed001);
  const worker = createAttnScopeWorker();
  const inWorker = await worker.selfAttention(seed001);
  const workerSimdArch = (await worker.ready).simdArch;
  worker.terminate();
  // Two heads of seed 001, split across a pool of two workers.
  const pool = createAttnScopePool({ workers: 2, minSplitFlops: 0 });
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
  out.dataset.done = '1';
}

main().catch((e: unknown) => {
  out.textContent = `error: ${e instanceof Error ? e.message : String(e)}`;
  out.dataset.done = '1';
});
