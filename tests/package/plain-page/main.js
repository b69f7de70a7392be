// The package straight from node_modules in the page and in its module worker.
import { createAttnScope } from 'attnscope';
import { createAttnScopeWorker } from 'attnscope/worker';

const I2 = [[1, 0], [0, 1]];
const seed001 = { x: I2, wq: I2, wk: I2, wv: [[1, 2], [3, 4]] };
const out = document.getElementById('result');

try {
  const engine = await createAttnScope();
  const page = engine.selfAttention(seed001);
  const worker = createAttnScopeWorker();
  const inWorker = await worker.selfAttention(seed001);
  worker.terminate();
  out.textContent = JSON.stringify({
    simdArch: engine.simdArch,
    page: Array.from(page.output.data),
    worker: Array.from(inWorker.output.data),
  });
} catch (e) {
  out.textContent = `error: ${e instanceof Error ? e.message : String(e)}`;
}
out.dataset.done = '1';
