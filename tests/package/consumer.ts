// Type-checked with tsc --strict (NodeNext) against the shipped declarations.
import {
  AttnScopeError,
  createAttnScope,
  type AttnScope,
  type SelfAttentionResult,
  type TensorOut,
} from 'attnscope';
import { attendHead, type HeadSteps } from 'attnscope/reference';
import { gpt2Tokenizer, type TokenPiece } from 'attnscope/tokenizer';
import {
  createAttnScopePool,
  createAttnScopeWorker,
  type AttnScopePool,
  type AttnScopeWorker,
  type PoolInfo,
} from 'attnscope/worker';

export async function run(): Promise<number> {
  const engine: AttnScope = await createAttnScope({
    wasmUrl: new URL('https://example.org/attnscope.wasm'),
  });
  const r: SelfAttentionResult = engine.selfAttention({
    x: new Float32Array(4),
    shape: [2, 2],
    wq: [
      [1, 0],
      [0, 1],
    ],
    wk: [
      [1, 0],
      [0, 1],
    ],
    wv: [1, 2, 3, 4],
    heads: 1,
    scale: 0.5,
    mask: {
      causal: true,
      lengths: [2],
      additive: [
        [0, -Infinity],
        [0, 0],
      ],
    },
    trace: true,
  });
  const weights: TensorOut | undefined = r.trace?.weights;
  const flags: Uint8Array = r.fullyMasked.data;
  // @ts-expect-error: heads must be a number
  engine.selfAttention({ x: [[1]], wq: [[1]], wk: [[1]], wv: [[1]], heads: '2' });
  // @ts-expect-error: mask names are fixed
  engine.attention({ q: [[1]], k: [[1]], v: [[1]], mask: 'future' });
  const tileRows: number = engine.matmulTileRows;
  engine.setMatmulTileRows('auto');
  // @ts-expect-error: the register tile is 4 or 6 rows tall
  engine.setMatmulTileRows(5);
  const worker: AttnScopeWorker = createAttnScopeWorker();
  const pe: TensorOut = await worker.positionalEncoding({ length: 4, dim: 2 });
  worker.terminate();
  const pool: AttnScopePool = createAttnScopePool({ workers: 2, minSplitFlops: 0 });
  const info: PoolInfo = await pool.ready;
  const q = new Float32Array(2 * 3 * 4);
  const a = await pool.attention(
    { q, k: q, v: q, shape: [2, 3, 4], mask: 'causal', trace: false },
    [q.buffer],
  );
  // @ts-expect-error: the pool's memory usage is per worker
  const heap: number = (await pool.memoryUsage()).heapSize;
  pool.terminate();
  const e = new AttnScopeError('x');
  return (
    (weights?.data.length ?? 0) +
    flags.length +
    pe.shape.length +
    e.message.length +
    info.workers +
    tileRows +
    a.output.data.length +
    heap
  );
}

// attnscope/reference is typed too.
const steps: HeadSteps = attendHead(
  [1, 0, 0, 1],
  [1, 0, 0, 1],
  [1, 2, 3, 4],
  2,
  2,
  2,
  Math.SQRT1_2,
);
const firstWeight: number | undefined = steps.weights[0];
void firstWeight;

// attnscope/tokenizer is typed too.
const ids: number[] = gpt2Tokenizer.encode('Hello world');
const pieces: TokenPiece[] = gpt2Tokenizer.pieces('Hello world');
const text: string = gpt2Tokenizer.decode(Int32Array.from(ids));
const vocabSize: 50257 = gpt2Tokenizer.vocabSize;
// @ts-expect-error: encode takes text
gpt2Tokenizer.encode([15496]);
void [pieces, text, vocabSize];
