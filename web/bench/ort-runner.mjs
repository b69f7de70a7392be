// onnxruntime-web (wasm backend, one thread, SIMD build) running the
// attention graphs from onnx-model.mjs.
import { dirname } from 'node:path';
import { createRequire } from 'node:module';
import * as ort from 'onnxruntime-web';
import {
  groupQueryAttentionModel,
  matMulModel,
  multiHeadAttentionModel,
  onnxAttentionModel,
  unfusedAttentionModel,
} from './onnx-model.mjs';

const require = createRequire(import.meta.url);

let configured = false;
/**
 * One thread by default, so the comparison with the single-threaded core is
 * fair; gpt2-bench's --threads=N asks for N. The only wasm shipped is the SIMD
 * build (ort-wasm-simd-threaded.wasm); with numThreads = 1 it runs without
 * workers. Paths are plain file paths, which the Node loader reads with fs.
 * The first call decides: onnxruntime-web reads numThreads once.
 */
export function configureOrt(threads = 1) {
  if (configured) return;
  ort.env.wasm.numThreads = threads;
  ort.env.wasm.wasmPaths = dirname(require.resolve('onnxruntime-web')) + '/';
  ort.env.logLevel = 'error';
  configured = true;
}

export const ortVersion = () => ort.env.versions?.web ?? 'unknown';

/** (1, H, T, d) → (1, T, H·d), the layout com.microsoft MultiHeadAttention takes. */
function headsToTokens(x, H, T, d) {
  const out = new Float32Array(x.length);
  for (let h = 0; h < H; ++h)
    for (let t = 0; t < T; ++t)
      out.set(x.subarray((h * T + t) * d, (h * T + t + 1) * d), (t * H + h) * d);
  return out;
}
function tokensToHeads(x, H, T, d) {
  const out = new Float32Array(x.length);
  for (let h = 0; h < H; ++h)
    for (let t = 0; t < T; ++t)
      out.set(x.subarray((t * H + h) * d, (t * H + h + 1) * d), (h * T + t) * d);
  return out;
}

const variants = {
  unfused: { build: unfusedAttentionModel, tokenLayout: false },
  attention: { build: onnxAttentionModel, tokenLayout: false },
  mha: { build: multiHeadAttentionModel, tokenLayout: true },
};

/**
 * Prepares one session for (H, T, d, causal). Returns { run(): Promise<void>, output(): Float32Array in (H,T,d), release() }.
 * @param {'unfused'|'attention'|'mha'} variant
 */
export async function createOrtAttention(variant, { q, k, v, H, T, d, causal }) {
  configureOrt();
  const { build, tokenLayout } = variants[variant];
  const session = await ort.InferenceSession.create(build(H, T, d, causal), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  // Layout changes happen once, outside the timed region: they are O(T·d), not attention.
  const dims = tokenLayout ? [1, T, H * d] : [1, H, T, d];
  const prep = (x) => new ort.Tensor('float32', tokenLayout ? headsToTokens(x, H, T, d) : x, dims);
  const feeds = { q: prep(q), k: prep(k), v: prep(v) };
  let last = null;
  return {
    async run() {
      if (last) last.dispose?.();
      const result = await session.run(feeds);
      last = result.output;
    },
    output() {
      const data = last.data;
      return tokenLayout ? tokensToHeads(data, H, T, d) : Float32Array.from(data);
    },
    async release() {
      if (last) last.dispose?.();
      await session.release();
    },
  };
}

/** y = x·W in onnxruntime-web (MLAS sgemm), for the matmul comparison. */
export async function createOrtMatMul({ x, weight, rows, inDim, outDim }) {
  configureOrt();
  const session = await ort.InferenceSession.create(matMulModel(rows, inDim, outDim, weight), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: 1,
  });
  const feeds = { x: new ort.Tensor('float32', x, [rows, inDim]) };
  let last = null;
  return {
    async run() {
      last?.dispose?.();
      last = (await session.run(feeds)).y;
    },
    output: () => Float32Array.from(last.data),
    async release() {
      last?.dispose?.();
      await session.release();
    },
  };
}

/**
 * com.microsoft GroupQueryAttention (causal) on q (1, H, T, d) and k, v (1, Hkv, T, d):
 * { run(), output() in (1, H, T, d), release() }; layouts change outside the timed run.
 */
export async function createOrtGroupQueryAttention({ q, k, v, H, Hkv, T, d }) {
  configureOrt();
  const session = await ort.InferenceSession.create(groupQueryAttentionModel(H, Hkv, T, d), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const feeds = {
    q: new ort.Tensor('float32', headsToTokens(q, H, T, d), [1, T, H * d]),
    k: new ort.Tensor('float32', headsToTokens(k, Hkv, T, d), [1, T, Hkv * d]),
    v: new ort.Tensor('float32', headsToTokens(v, Hkv, T, d), [1, T, Hkv * d]),
  };
  let last = null;
  const release = (r) => Object.values(r ?? {}).forEach((t) => t.dispose?.());
  return {
    async run() {
      release(last);
      last = await session.run(feeds);
    },
    output: () => tokensToHeads(last.output.data, H, T, d),
    async release() {
      release(last);
      await session.release();
    },
  };
}
