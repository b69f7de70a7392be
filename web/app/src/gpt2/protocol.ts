// Messages between the page and the GPT-2 worker (worker.ts).
import type { ForwardInterventions, ModelConfig, SelfAttentionResult } from 'attnscope';

export type Gpt2Request =
  | { kind: 'start' } // the engine only, while the model's file is still on its way
  | { kind: 'load'; file: File }
  // weightsHeld: the layer whose Q, K and V projections the page already holds (−1: none);
  // the reply leaves them out for that layer. attentionsHeld: the tokens (joined by commas)
  // whose attentions the page holds; the reply leaves them out for those tokens.
  | {
      kind: 'forward';
      tokens: number[];
      layer: number;
      weightsHeld: number;
      attentionsHeld: string | null;
    }
  | { kind: 'generate'; tokens: number[]; temperature: number; topK: number; seed: number }
  | {
      kind: 'analyse';
      tokens: number[];
      interventions: Interventions;
      attribution: boolean;
      lens: boolean;
    }
  | { kind: 'unload' };

/** The interventions the page asks for (the package's ForwardInterventions, all lists present). */
export type Interventions = Required<ForwardInterventions>;

/** One forward with the interventions and what the open panels ask for. */
export interface AnalysisReply {
  /** The logits after the last token, with the interventions (vocabSize). */
  lastLogits: Float32Array;
  /** With interventions: per layer the change of the weights (H, T, T). */
  diffAttentions: Float32Array[] | null;
  /** With attribution: per layer the weights and value norms (H, T, T) and the rollout (T, T). */
  attribution: {
    attentions: Float32Array[];
    rollout: Float32Array[];
    valueNorms: Float32Array[];
  } | null;
  /** With lens: (layers, T), the logit lens's most likely token and its probability. */
  lens: { ids: Int32Array; probabilities: Float32Array } | null;
  millis: number;
}

/** One layer's attention input, ready for engine.selfAttention. */
export interface LayerInput {
  /** (T, C + 1): ln_1 of the residual stream entering the layer, then a column of ones. */
  x: Float32Array;
  /** (C + 1, C) each: the columns of c_attn for Q, K and V, with their biases as the last row. */
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
}

/**
 * ForwardReply as the worker sends it: the projections and the attentions only when the
 * page lacks them; `key` names the tokens (joined by commas).
 */
export interface ForwardWireReply extends Omit<ForwardReply, 'layer' | 'attentions'> {
  key: string;
  attentions: Float32Array[] | null;
  layer: { x: Float32Array; weights: Omit<LayerInput, 'x'> | null };
}

export interface ForwardReply {
  /** One per layer: the softmax weights (H, T, T). */
  attentions: Float32Array[];
  /** The logits after the last token (vocabSize). */
  lastLogits: Float32Array;
  layer: LayerInput;
  /** engine.selfAttention on `layer`, traced, causal, scaled by 1/√d_k: the views' numbers. */
  attention: SelfAttentionResult;
  /** The worker's engine: its SIMD build and thread count (for the benchmarks). */
  engine: string;
  /** The whole request, in the worker. */
  millis: number;
  /** Of which model.forward (0 when the tokens are those of the last request)… */
  forwardMillis: number;
  /** …and the layer's selfAttention. */
  layerMillis: number;
}

export type Gpt2Reply =
  | { id: number; progress: { phase: 'reading' | 'loading'; loaded: number; total: number } }
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; error: string };

export type { ModelConfig };
