// The peers of the GPT-2 benchmark, each behind the same small interface:
// Both take the weights as a Map of name (Hugging Face's, no prefix) → { data, shape }.
//   forward(tokens) → Float32Array logits (T × V), every position, as model.forward gives
//   generate(prompt, count) → { tokens, decode: { wall, cpu } }: greedy, through the
//     runtime's own key/value cache; decode times (ms) the steps after the first new token
//   release()
// onnxruntime-web runs the graph from gpt2-onnx.mjs; TF.js (wasm backend) runs
// the same network written with its ops. Both on one thread.
import * as ort from 'onnxruntime-web';
import * as tf from '@tensorflow/tfjs-core';
import { cachedCausalBias, gpt2OnnxModel } from './gpt2-onnx.mjs';
import { configureOrt } from './ort-runner.mjs';
import { gpt2Layers } from './tfjs-gpt2-layers.mjs';
import { initTfjs } from './tfjs-runner.mjs';

const argmaxLast = (logits, V) => {
  let best = 0;
  const row = logits.length - V;
  for (let j = 1; j < V; j++) if (logits[row + j] > logits[row + best]) best = j;
  return best;
};
const int64 = (xs) => BigInt64Array.from(xs, (x) => BigInt(x));
/**
 * Greedy decoding: the prompt, then one token a step; `next(tokens, start)`
 * runs tokens at positions start.. through the runtime's cache and returns
 * their logits. Times the steps after the first new token.
 */
async function greedy(prompt, count, V, next) {
  const tokens = [argmaxLast(await next(prompt, 0), V)];
  const elapsed = clock();
  while (tokens.length < count) {
    const start = prompt.length + tokens.length - 1;
    tokens.push(argmaxLast(await next([tokens.at(-1)], start), V));
  }
  return { tokens, decode: elapsed() };
}

/** A clock of wall and process CPU time (ms) from now. */
function clock() {
  const wall = performance.now();
  const cpu = process.cpuUsage();
  return () => {
    const used = process.cpuUsage(cpu);
    return { wall: performance.now() - wall, cpu: (used.user + used.system) / 1000 };
  };
}

/** onnxruntime-web on the graph of gpt2-onnx.mjs. */
export async function createOrtGpt2(weights, config, threads = 1) {
  configureOrt(threads);
  const { layers, heads: H, dModel: C, vocabSize: V } = config;
  const d = C / H;
  const session = await ort.InferenceSession.create(gpt2OnnxModel(weights, config), {
    executionProviders: ['wasm'],
    graphOptimizationLevel: 'all',
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
  });
  const emptyCache = new ort.Tensor('float32', new Float32Array(0), [1, H, 0, d]);
  /** Runs `tokens` after the cache `past` (null = empty); returns the outputs. */
  async function run(tokens, start, past) {
    const count = tokens.length;
    const feeds = {
      input_ids: new ort.Tensor('int64', int64(tokens), [1, count]),
      position_ids: new ort.Tensor(
        'int64',
        int64(Array.from({ length: count }, (_, i) => start + i)),
        [1, count],
      ),
      attention_bias: new ort.Tensor('float32', cachedCausalBias(start, count), [
        1,
        1,
        count,
        start + count,
      ]),
    };
    for (let l = 0; l < layers; l++) {
      feeds[`past_key_${l}`] = past?.[`present_key_${l}`] ?? emptyCache;
      feeds[`past_value_${l}`] = past?.[`present_value_${l}`] ?? emptyCache;
    }
    return session.run(feeds);
  }
  const dispose = (outputs) => {
    for (const t of Object.values(outputs ?? {})) t.dispose?.();
  };
  return {
    async forward(tokens) {
      const out = await run(tokens, 0, null);
      const logits = Float32Array.from(out.logits.data);
      dispose(out);
      return logits;
    },
    async generate(prompt, count) {
      let out = null;
      const result = await greedy(prompt, count, V, async (tokens, start) => {
        const next = await run(tokens, start, out);
        dispose(out);
        out = next;
        return out.logits.data;
      });
      dispose(out);
      return result;
    },
    release: () => session.release(),
  };
}

/** TF.js (wasm backend) running GPT-2 with its ops; weights kept as tensors. */
export async function createTfjsGpt2(weights, config) {
  await initTfjs();
  const { layers, heads: H, dModel: C, vocabSize: V } = config;
  const d = C / H;
  const w = new Map();
  for (const [name, { data, shape }] of weights) w.set(name, tf.tensor(data, shape));
  // wteᵀ once: the wasm backend's matMul with transposeB takes a much slower path.
  const wteT = tf.transpose(w.get('wte.weight'));
  const scale = tf.scalar(1 / Math.sqrt(d));

  const { layerNorm, linear, gelu } = gpt2Layers(w);
  const toHeads = (x, count) => tf.transpose(tf.reshape(x, [count, H, d]), [1, 0, 2]);

  /** New tokens after `cache` (per layer { k, v } of (H, past, d)); returns logits and the new cache. */
  function step(tokens, start, cache) {
    const count = tokens.length;
    const positions = tf.tensor1d(
      Array.from({ length: count }, (_, i) => start + i),
      'int32',
    );
    let x = tf.add(
      tf.gather(w.get('wte.weight'), tf.tensor1d(tokens, 'int32')),
      tf.gather(w.get('wpe.weight'), positions),
    );
    const bias = tf.tensor2d(cachedCausalBias(start, count), [count, start + count]);
    const next = [];
    for (let l = 0; l < layers; l++) {
      const p = `h.${l}`;
      const [q, k, v] = tf.split(linear(layerNorm(x, `${p}.ln_1`), `${p}.attn.c_attn`), 3, 1);
      let keys = toHeads(k, count);
      let values = toHeads(v, count);
      if (cache) {
        keys = tf.concat([cache[l].k, keys], 1);
        values = tf.concat([cache[l].v, values], 1);
      }
      next.push({ k: keys, v: values });
      const scores = tf.add(
        tf.mul(tf.matMul(toHeads(q, count), tf.transpose(keys, [0, 2, 1])), scale),
        bias,
      );
      const att = tf.reshape(tf.transpose(tf.matMul(tf.softmax(scores), values), [1, 0, 2]), [
        count,
        C,
      ]);
      x = tf.add(x, linear(att, `${p}.attn.c_proj`));
      x = tf.add(
        x,
        linear(gelu(linear(layerNorm(x, `${p}.ln_2`), `${p}.mlp.c_fc`)), `${p}.mlp.c_proj`),
      );
    }
    const logits = tf.matMul(layerNorm(x, 'ln_f'), wteT);
    return { logits, cache: next };
  }
  /** step() inside tidy(): keeps the new cache, frees the old one and everything else. */
  function tidyStep(tokens, start, cache) {
    let result;
    tf.tidy(() => {
      const { logits, cache: next } = step(tokens, start, cache);
      for (const kv of next) (tf.keep(kv.k), tf.keep(kv.v));
      result = { logits: logits.dataSync(), cache: next };
    });
    for (const kv of cache ?? []) (kv.k.dispose(), kv.v.dispose());
    return result;
  }
  return {
    async forward(tokens) {
      const { logits, cache } = tidyStep(tokens, 0, null);
      for (const kv of cache) (kv.k.dispose(), kv.v.dispose());
      return logits;
    },
    async generate(prompt, count) {
      let cache = null;
      const result = await greedy(prompt, count, V, (tokens, start) => {
        let logits;
        ({ logits, cache } = tidyStep(tokens, start, cache));
        return logits;
      });
      for (const kv of cache) (kv.k.dispose(), kv.v.dispose());
      return result;
    },
    async release() {
      for (const t of w.values()) t.dispose();
      wteT.dispose();
      scale.dispose();
    },
  };
}
