// GPT-2 training in TF.js (wasm backend, one thread), the peer of attnscope's
// trainer in train-bench.mjs: the same network as gpt2-peers.mjs (pre-norm
// blocks, LayerNorm eps 1e-5, tanh GELU, causal attention, logits through the
// tied wte), gradients by tf.variableGrads, global-norm clipping and AdamW
// written with TF.js ops as attnscope's trainer defines them
// (cpp/src/train_optimizer.cpp): bias-corrected moments, decoupled weight
// decay on the matrices only.
import * as tf from '@tensorflow/tfjs-core';
import './tfjs-gradients.mjs';
import { gpt2Layers } from './tfjs-gpt2-layers.mjs';
import { initTfjs } from './tfjs-runner.mjs';

/**
 * weights: Map of name (Hugging Face's, no prefix) → { data, shape }, the
 * initial values; config: { layers, heads, dModel, vocabSize };
 * options: { lr, betas: [b1, b2], eps, weightDecay, clip } (a constant rate).
 * Returns { step(tokens, B, T) → loss before the update, release() }, where
 * tokens is an Int32Array of B sequences of T tokens, as trainer.step takes them.
 */
export async function createTfjsTrainer(weights, config, options) {
  await initTfjs();
  const { layers, heads: H, dModel: C, vocabSize: V } = config;
  const d = C / H;
  const { lr, betas, eps = 1e-8, weightDecay, clip } = options;
  const [beta1, beta2] = betas;
  const names = [...weights.keys()];
  const w = new Map();
  const moments = new Map();
  for (const [name, { data, shape }] of weights) {
    w.set(name, tf.variable(tf.tensor(data, shape), true, name));
    moments.set(name, { m: tf.variable(tf.zeros(shape)), v: tf.variable(tf.zeros(shape)) });
  }
  const scale = 1 / Math.sqrt(d);

  const { layerNorm, linear, gelu } = gpt2Layers(w);

  /** The mean next-token cross-entropy of inputs (B, L) against targets (B·L). */
  function loss(inputs, targets, B, L, causal) {
    const N = B * L;
    const positions = tf.slice(w.get('wpe.weight'), [0, 0], [L, C]);
    // The token embedding as a one-hot product: gather's gradient needs the
    // UnsortedSegmentSum kernel, which the wasm backend does not have.
    const tokens = tf.matMul(tf.oneHot(tf.reshape(inputs, [N]), V), w.get('wte.weight'));
    let x = tf.reshape(tf.add(tf.reshape(tokens, [B, L, C]), positions), [N, C]);
    // (N, C) → (B, H, L, d)
    const toHeads = (t) => tf.transpose(tf.reshape(t, [B, L, H, d]), [0, 2, 1, 3]);
    for (let l = 0; l < layers; l++) {
      const p = `h.${l}`;
      const [q, k, v] = tf.split(linear(layerNorm(x, `${p}.ln_1`), `${p}.attn.c_attn`), 3, 1);
      // An explicit transpose of the keys, as the other TF.js runners do
      // (the wasm backend's transposeB path is slower).
      const scores = tf.add(
        tf.mul(tf.matMul(toHeads(q), tf.transpose(toHeads(k), [0, 1, 3, 2])), scale),
        causal,
      );
      const heads = tf.matMul(tf.softmax(scores), toHeads(v));
      const att = tf.reshape(tf.transpose(heads, [0, 2, 1, 3]), [N, C]);
      x = tf.add(x, linear(att, `${p}.attn.c_proj`));
      x = tf.add(
        x,
        linear(gelu(linear(layerNorm(x, `${p}.ln_2`), `${p}.mlp.c_fc`)), `${p}.mlp.c_proj`),
      );
    }
    const logits = tf.matMul(layerNorm(x, 'ln_f'), tf.transpose(w.get('wte.weight')));
    return tf.losses.softmaxCrossEntropy(tf.oneHot(targets, V), logits);
  }

  const causalMasks = new Map();
  /** The additive causal mask (L, L): 0 on and below the diagonal, −∞ above. */
  function causalMask(L) {
    if (!causalMasks.has(L)) {
      const m = new Float32Array(L * L);
      for (let i = 0; i < L; i++) for (let j = i + 1; j < L; j++) m[i * L + j] = -Infinity;
      causalMasks.set(L, tf.keep(tf.tensor2d(m, [L, L]))); // built inside tidy(), kept across steps
    }
    return causalMasks.get(L);
  }

  let steps = 0;
  return {
    step(tokens, B, T) {
      const L = T - 1;
      const inputs = new Int32Array(B * L);
      const targets = new Int32Array(B * L);
      for (let b = 0; b < B; b++) {
        inputs.set(tokens.subarray(b * T, b * T + L), b * L);
        targets.set(tokens.subarray(b * T + 1, (b + 1) * T), b * L);
      }
      steps += 1;
      let value;
      tf.tidy(() => {
        const mask = causalMask(L);
        const { value: lossTensor, grads } = tf.variableGrads(
          () =>
            loss(tf.tensor2d(inputs, [B, L], 'int32'), tf.tensor1d(targets, 'int32'), B, L, mask),
          names.map((n) => w.get(n)),
        );
        value = lossTensor.dataSync()[0];
        // Global-norm clipping: g · clip / (norm + 1e-6) when norm > clip.
        const norm = tf.sqrt(tf.addN(names.map((n) => tf.sum(tf.square(grads[n])))));
        const factor =
          clip > 0 ? tf.where(tf.greater(norm, clip), tf.div(clip, tf.add(norm, 1e-6)), 1) : 1;
        const step = lr / (1 - beta1 ** steps);
        const invSqrtCorrection2 = 1 / Math.sqrt(1 - beta2 ** steps);
        for (const n of names) {
          const g = tf.mul(grads[n], factor);
          const { m, v } = moments.get(n);
          m.assign(tf.add(tf.mul(m, beta1), tf.mul(g, 1 - beta1)));
          v.assign(tf.add(tf.mul(v, beta2), tf.mul(tf.square(g), 1 - beta2)));
          const keep = w.get(n).rank === 2 ? 1 - lr * weightDecay : 1;
          const update = tf.div(
            tf.mul(m, step),
            tf.add(tf.mul(tf.sqrt(v), invSqrtCorrection2), eps),
          );
          w.get(n).assign(tf.sub(tf.mul(w.get(n), keep), update));
        }
      });
      return value;
    },
    release() {
      for (const t of w.values()) t.dispose();
      for (const { m, v } of moments.values()) (m.dispose(), v.dispose());
      for (const m of causalMasks.values()) m.dispose();
    },
  };
}
