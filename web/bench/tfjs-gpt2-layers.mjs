// GPT-2's LayerNorm, linear layer and tanh GELU in TF.js, over a map of named
// weights, shared by the TF.js peers of the GPT-2 forward (gpt2-peers.mjs) and
// of the training step (train-tfjs.mjs).
import * as tf from '@tensorflow/tfjs-core';

/** The three layers reading `w` (name → tensor or variable) by GPT-2's parameter names. */
export function gpt2Layers(w) {
  const layerNorm = (x, p) => {
    const { mean, variance } = tf.moments(x, -1, true);
    const normed = tf.mul(tf.sub(x, mean), tf.rsqrt(tf.add(variance, 1e-5)));
    return tf.add(tf.mul(normed, w.get(`${p}.weight`)), w.get(`${p}.bias`));
  };
  const linear = (x, p) => tf.add(tf.matMul(x, w.get(`${p}.weight`)), w.get(`${p}.bias`));
  // x·x·x rather than pow(x, 3): pow's gradient also differentiates the exponent.
  const gelu = (x) =>
    tf.mul(
      tf.mul(x, 0.5),
      tf.add(
        1,
        tf.tanh(
          tf.mul(tf.add(x, tf.mul(tf.mul(tf.mul(x, x), x), 0.044715)), Math.sqrt(2 / Math.PI)),
        ),
      ),
    );
  return { layerNorm, linear, gelu };
}
