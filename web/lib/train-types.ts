// Public types of training: engine.createModel, model.trainer, trainer.step,
// and engine.attentionBackward.
import type { AttentionCommonOptions, TensorInput, TensorOut } from './types.js';

/** Arguments of {@link AttnScope.createModel}: a GPT-2 with GPT-2's initialisation. */
export interface CreateModelArgs {
  layers: number;
  /** Attention heads per layer; a divisor of dModel. */
  heads: number;
  /** C, the width of the residual stream. */
  dModel: number;
  vocabSize: number;
  /** Positions the model has embeddings for. */
  contextLength: number;
  /**
   * Seed of the initial weights, an integer in [0, 2^32) (default 0): the same seed gives the
   * same weights (std::mt19937 + Box–Muller in the core, the same in every build).
   */
  seed?: number;
}

/** Options of {@link Model.trainer}: AdamW with clipping and a warm-up + cosine schedule. */
export interface TrainerOptions {
  /** Peak learning rate, > 0. */
  lr: number;
  /** AdamW's β1 and β2, each in [0, 1); default [0.9, 0.95]. */
  betas?: readonly [number, number];
  /** Decoupled weight decay of the matrices (not biases or LayerNorm); default 0. */
  weightDecay?: number;
  /** Clip the gradients' global L2 norm to this; 0 or absent: no clipping. */
  clip?: number;
  /** AdamW's epsilon; default 1e-8. */
  eps?: number;
  /** Steps of linear warm-up from lr/warmup to lr; default 0. */
  warmup?: number;
  /** When above warmup: a cosine from lr down to lr/10 at this step (and lr/10 after); default 0 (constant). */
  totalSteps?: number;
}

export interface TrainStepArgs {
  /** B sequences of T token ids, row-major (B·T ids). */
  tokens: Int32Array | readonly number[];
  /** [B, T]: T ≥ 2 and T − 1 ≤ contextLength (positions 0..T−2 predict tokens 1..T−1). */
  shape: readonly [number, number] | readonly number[];
  /**
   * Which predictions count (default: all): B·(T − 1) flags, 0 or 1, row-major; entry
   * [b, t] = 1 counts the prediction of tokens[b, t + 1] from tokens[b, 0..t]. The loss is
   * then the mean over the selected predictions, and the others add nothing to the
   * gradients (for tasks whose answers are known only at some positions). At least one 1.
   */
  lossMask?: Uint8Array | readonly number[];
}

export interface TrainStepResult {
  /** Mean next-token cross-entropy of the batch before the update (nats), over the predictions lossMask selects. */
  loss: number;
  /** Global L2 norm of the gradients, before clipping. */
  gradientNorm: number;
  /** The learning rate this step used. */
  learningRate: number;
}

/** AdamW training of its model, in place. */
export interface Trainer {
  /** One step: forward, backward, clipping, AdamW update of the model's weights. */
  step(args: TrainStepArgs): TrainStepResult;
  /**
   * dLoss/dweight of weight `name` (a tensor name of the model's .safetensors file, e.g.
   * 'h.0.attn.c_attn.weight') from the last step, before clipping, shaped as the weight.
   * Zeros before the first step.
   */
  gradient(name: string): TensorOut;
  /** Steps taken so far. */
  readonly steps: number;
}

/**
 * Arguments of {@link AttnScope.attentionBackward}: those of attention(), and dOutput. With rope,
 * dq and dk are the gradients of the unrotated q and k (the rotation's transpose applied).
 */
export interface AttentionBackwardArgs extends AttentionCommonOptions {
  q: TensorInput;
  k: TensorInput;
  v: TensorInput;
  /** Shape of q: [B, H, Tq, d], [H, Tq, d] or [Tq, d]. */
  shape?: readonly number[];
  /** Shape of k (default: shape); GQA and a key/value cache as in attention(). */
  kvShape?: readonly number[];
  /** Last dimension of v; default: inferred from its length. */
  dv?: number;
  /** dLoss/dOutput, shaped as attention()'s output [..., Tq, d_v]. */
  dOutput: TensorInput;
  /**
   * The forward's output, from attention() with the same arguments, `trace: false` and
   * `logSumExp: true`; given with `logSumExp`, the backward starts from them instead of
   * running that forward again (the same gradients, bit for bit). Needs `trace: false`.
   */
  output?: TensorInput;
  /** That forward's `logSumExp`, shaped as q without its last dimension [..., Tq]. */
  logSumExp?: TensorInput;
}

/** Gradients of a loss with respect to q, k and v, shaped as each. */
export interface AttentionBackwardResult {
  dq: TensorOut;
  dk: TensorOut;
  dv: TensorOut;
}
