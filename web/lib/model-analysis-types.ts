// Public types of model.forward's analysis options (model-types.ts): the
// interventions, their diff against the clean run, attribution and the logit lens.
import type { TensorOut } from './types.js';

/** A head of the model: layer in [0, layers), head in [0, heads). */
export interface HeadRef {
  /** The block, from 0. */
  layer: number;
  /** The head within the block, from 0. */
  head: number;
}

/** An ablate entry: the head and what its output becomes. */
export interface HeadAblation extends HeadRef {
  /** 'zero' (default) or 'mean': the head's output averaged over the sequence's positions. */
  mode?: 'zero' | 'mean';
}

/** A replace entry: the head whose pattern is replaced and the head whose clean pattern it takes. */
export interface PatternReplacement extends HeadRef {
  /** The head (any layer) whose weights in the clean run are used. */
  from: HeadRef;
}

/** Changes to one forward pass; each head is the target of at most one ablate or replace entry. */
export interface ForwardInterventions {
  /** Head outputs (weights·V, before c_proj) set to zero, or to their mean over this sequence's positions (default 'zero'). */
  ablate?: readonly HeadAblation[];
  /**
   * Positions no query may attend to, in every layer and head (each at most
   * once, in [0, T)). A query whose every visible key is masked attends to
   * itself alone. Replaced patterns (below) are not masked.
   */
  maskTokens?: readonly number[];
  /** Head (layer, head) uses the weights of head `from` in the clean run (any layer), with its own values. */
  replace?: readonly PatternReplacement[];
}

/** The run with interventions minus the clean run. */
export interface ForwardDiff {
  /** [T, vocabSize]; with logits: 'last', [1, vocabSize]. */
  logits: TensorOut;
  /** With trace: one per layer, [heads, T, T]. */
  attentions?: TensorOut[];
}

export interface ForwardAttribution {
  /** Attention rollout after each layer, [T, T]: head-averaged weights plus identity, rows renormalised, multiplied through the layers. */
  rollout: TensorOut[];
  /** One per layer, [heads, T, T]: α_hij · ‖v_hj · W_O,h‖ (W_O,h: head h's rows of attn.c_proj.weight). */
  valueNorms: TensorOut[];
}

/** Per layer and position the top-k tokens of softmax(ln_f(residual) · wteᵀ), most likely first. */
export interface LogitLens {
  /** [layers, T, topK]. */
  ids: { data: Int32Array; shape: number[] };
  /** [layers, T, topK]. */
  probabilities: TensorOut;
}
