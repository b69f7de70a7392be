// TensorFlow.js with its wasm backend (XNNPACK), one thread, SIMD binary:
// scores = matMul(q, kᵀ) · 1/√d (+ causal_mask) → softmax → matMul(weights, v).
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import * as tf from '@tensorflow/tfjs-core';
import { setThreadsCount, setWasmPaths } from '@tensorflow/tfjs-backend-wasm';
import { causalMaskAdditive } from './onnx-model.mjs';

const require = createRequire(import.meta.url);

let ready = null;
/** Initialises the backend once; resolves to the wasm binary actually chosen. */
export function initTfjs() {
  ready ??= (async () => {
    // Ask for the non-threaded SIMD binary: in Node the threaded one would
    // need workers, and one thread keeps the comparison fair anyway.
    tf.env().set('WASM_HAS_MULTITHREAD_SUPPORT', false);
    tf.env().set('WASM_HAS_SIMD_SUPPORT', true);
    const pkg = dirname(require.resolve('@tensorflow/tfjs-backend-wasm/package.json'));
    setWasmPaths(join(pkg, 'dist') + '/');
    setThreadsCount(1);
    if (!(await tf.setBackend('wasm'))) throw new Error('tfjs wasm backend failed to initialise');
    await tf.ready();
    return 'tfjs-backend-wasm-simd.wasm';
  })();
  return ready;
}

export const tfjsVersion = () => tf.version_core;

/**
 * @param {'batched'|'per-head'} variant batched: one batched matMul over heads;
 *   per-head: one 2-D matMul per head (T×T scratch per head, not H×T×T).
 * Returns { run(), output(), release() }. run() starts from the Float32Arrays and
 * ends with the output read back, like the other runtimes.
 */
export async function createTfjsAttention(variant, { q, k, v, H, T, d, causal }) {
  await initTfjs();
  const scale = tf.scalar(1 / Math.sqrt(d));
  const mask = causal ? tf.tensor2d(causalMaskAdditive(T), [T, T]) : null;
  const attend = (queries, keys, values) => {
    // An explicit transpose of the keys beats matMul(..., transposeB = true),
    // which the wasm backend runs through a much slower path (measured:
    // docs/performance/journal.md, "Figures formerly in code comments").
    let logits = tf.mul(
      tf.matMul(queries, tf.transpose(keys, keys.rank === 3 ? [0, 2, 1] : [1, 0])),
      scale,
    );
    if (mask) logits = tf.add(logits, mask);
    return tf.matMul(tf.softmax(logits), values);
  };
  let last = null;
  // One output array for every run, as attnscope's runner passes one `out`.
  const out = new Float32Array(H * T * d);
  return {
    async run() {
      // Results are read back inside tidy() and stored, never returned from it:
      // tidy() walks a returned object's properties looking for tensors, which
      // for a Float32Array means every element (measured: docs/performance/journal.md).
      if (variant === 'batched') {
        const shape = [H, T, d];
        tf.tidy(() => {
          last = attend(
            tf.tensor3d(q, shape),
            tf.tensor3d(k, shape),
            tf.tensor3d(v, shape),
          ).dataSync();
        });
        return;
      }
      for (let h = 0; h < H; ++h) {
        const slice = (x) => tf.tensor2d(x.subarray(h * T * d, (h + 1) * T * d), [T, d]);
        tf.tidy(() => {
          out.set(attend(slice(q), slice(k), slice(v)).dataSync(), h * T * d);
        });
      }
      last = out;
    },
    output: () => last,
    async release() {
      scale.dispose();
      mask?.dispose();
    },
  };
}

/** y = x·W in tfjs-backend-wasm (XNNPACK), W kept as a tensor across runs like a layer's weight. */
export async function createTfjsMatMul({ x, weight, rows, inDim, outDim }) {
  await initTfjs();
  const w = tf.tensor2d(weight, [inDim, outDim]);
  let last = null;
  return {
    async run() {
      tf.tidy(() => {
        last = tf.matMul(tf.tensor2d(x, [rows, inDim]), w).dataSync();
      });
    },
    output: () => last,
    async release() {
      w.dispose();
    },
  };
}
