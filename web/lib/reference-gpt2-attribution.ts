// Attribution and logit lens of a GPT-2 forward written plainly in double
// precision (part of attnscope/reference), from gpt2ForwardReference's
// result: what model.forward's attribution and logitLens are checked against.
import { layerNormReference } from './reference.js';
import type {
  Gpt2ReferenceConfig,
  Gpt2ReferenceResult,
  Gpt2ReferenceWeights,
} from './reference-gpt2.js';

/** Attention rollout (Abnar & Zuidema 2020) after each layer, (T, T) each. */
export function attentionRolloutReference(
  attentions: Float64Array[],
  heads: number,
  T: number,
): Float64Array[] {
  const out: Float64Array[] = [];
  let rollout: Float64Array | undefined;
  for (const a of attentions) {
    const layer = new Float64Array(T * T);
    for (let i = 0; i < T; i++) {
      let sum = 0;
      for (let j = 0; j < T; j++) {
        let mean = 0;
        for (let h = 0; h < heads; h++) mean += a[(h * T + i) * T + j]!;
        sum += layer[i * T + j] = mean / heads + (i === j ? 1 : 0);
      }
      for (let j = 0; j < T; j++) layer[i * T + j] = layer[i * T + j]! / sum;
    }
    if (rollout) {
      const next = new Float64Array(T * T);
      for (let i = 0; i < T; i++)
        for (let k = 0; k < T; k++)
          for (let j = 0; j < T; j++)
            next[i * T + j] = next[i * T + j]! + layer[i * T + k]! * rollout[k * T + j]!;
      rollout = next;
    } else {
      rollout = layer;
    }
    out.push(rollout);
  }
  return out;
}

/** Value-norm weighted attention (Kobayashi et al. 2020) per layer, (heads, T, T): α_hij · ‖v_hj · W_O,h‖. */
export function valueNormsReference(
  weights: Gpt2ReferenceWeights,
  config: Gpt2ReferenceConfig,
  run: Gpt2ReferenceResult,
): Float64Array[] {
  const { heads: H, dModel: C } = config;
  const d = C / H;
  const T = run.hidden[0]!.length / C;
  return run.attentions.map((a, l) => {
    const proj = weights.get(`h.${l}.attn.c_proj.weight`)!.data;
    const v = run.values[l]!;
    const out = new Float64Array(H * T * T);
    for (let h = 0; h < H; h++) {
      for (let j = 0; j < T; j++) {
        let norm = 0;
        for (let o = 0; o < C; o++) {
          let s = 0;
          for (let c = 0; c < d; c++) s += v[j * C + h * d + c]! * proj[(h * d + c) * C + o]!;
          norm += s * s;
        }
        norm = Math.sqrt(norm);
        for (let i = 0; i < T; i++) out[(h * T + i) * T + j] = a[(h * T + i) * T + j]! * norm;
      }
    }
    return out;
  });
}

/** The logit lens: per layer and position the probabilities of every token, (layers, T, vocabSize). */
export function logitLensReference(
  weights: Gpt2ReferenceWeights,
  config: Gpt2ReferenceConfig,
  run: Gpt2ReferenceResult,
): Float64Array[] {
  const { layers, dModel: C, vocabSize: V } = config;
  const T = run.hidden[0]!.length / C;
  const wte = weights.get('wte.weight')!.data;
  const out: Float64Array[] = [];
  for (let l = 0; l < layers; l++) {
    const normed =
      l + 1 < layers
        ? layerNormReference(
            run.hidden[l + 1]!,
            T,
            C,
            weights.get('ln_f.weight')!.data,
            weights.get('ln_f.bias')!.data,
            1e-5,
          )
        : run.hidden[layers]!;
    const probabilities = new Float64Array(T * V);
    for (let t = 0; t < T; t++) {
      let max = -Infinity;
      for (let id = 0; id < V; id++) {
        let s = 0;
        for (let c = 0; c < C; c++) s += normed[t * C + c]! * wte[id * C + c]!;
        probabilities[t * V + id] = s;
        max = Math.max(max, s);
      }
      let sum = 0;
      for (let id = 0; id < V; id++)
        sum += probabilities[t * V + id] = Math.exp(probabilities[t * V + id]! - max);
      for (let id = 0; id < V; id++) probabilities[t * V + id] = probabilities[t * V + id]! / sum;
    }
    out.push(probabilities);
  }
  return out;
}
