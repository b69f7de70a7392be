// Public types of the models the engine loads (engine.loadModel): GPT-2's
// architecture, its forward pass, generation and saving.
import type { TensorOut } from './types.js';
import type { Trainer, TrainerOptions } from './train-types.js';
import type {
  ForwardAttribution,
  ForwardDiff,
  ForwardInterventions,
  LogitLens,
} from './model-analysis-types.js';

/** The architecture and sizes of a loaded model. */
export interface ModelConfig {
  architecture: 'gpt2';
  layers: number;
  /** Attention heads per layer; dModel / heads is the head dimension. */
  heads: number;
  /** C, the width of the residual stream. */
  dModel: number;
  vocabSize: number;
  /** Positions the model has embeddings for: the longest sequence it runs. */
  contextLength: number;
}

export interface LoadModelOptions {
  /**
   * What the file cannot say. `heads` is needed because no GPT-2 tensor's
   * shape gives it: without it the file's `__metadata__` "n_head" is used,
   * else dModel / 64 (every released GPT-2). The other fields, when given,
   * must equal what the tensors' shapes say (architecture: 'gpt2'); an
   * unknown field is an error.
   */
  config?: Partial<ModelConfig>;
}

export interface LoadModelFromBlobOptions extends LoadModelOptions {
  /**
   * Called as the file is read: bytes read so far and the file's size (after
   * the header, then after every piece of at most 8 MiB).
   */
  onProgress?(loaded: number, total: number): void;
}

export interface ModelForwardArgs {
  /** One sequence of token ids in [0, vocabSize), 1 to contextLength of them. */
  tokens: Int32Array | readonly number[];
  /** true (default): also the attention weights and the residual stream; false: logits only, through the fast paths. */
  trace?: boolean;
  /**
   * 'all' (default): the logits of every position. 'last': of the last
   * position only (what a next-token view reads), so the LM head runs on one
   * row instead of T; equal bit for bit to the last row 'all' gives. Also
   * the rows of `diff.logits`.
   */
  logits?: 'all' | 'last';
  /** Run with these changes, and report the change against the clean run in `diff`. */
  interventions?: ForwardInterventions;
  /** Attention rollout and value-norm weighted attention (needs trace). */
  attribution?: boolean;
  /** The top tokens decoded from the residual stream after each block (needs trace); topK default min(5, vocabSize). */
  logitLens?: { topK?: number };
  /**
   * For a page that re-runs the model as its text is edited: the tokens this
   * call shares at the start with the previous reusePrefix call keep their
   * keys and values in the model, and only the tokens from the first change
   * on are run; the result has the same shapes and values as a whole forward
   * (the unchanged rows are the previous call's). Not with interventions,
   * attribution or logitLens.
   */
  reusePrefix?: boolean;
  /**
   * With trace: which entries of `hidden` to return, by index in [0, layers]
   * ('all', the default: every one). The others are left as holes in the
   * array (`l in hidden` is false), and are not copied out.
   */
  hidden?: 'all' | readonly number[];
}

export interface ModelForwardResult {
  /** [T, vocabSize]; with logits: 'last', [1, vocabSize]. */
  logits: TensorOut;
  /** With trace: one per layer, the softmax weights [heads, T, T] (rows = queries). */
  attentions?: TensorOut[];
  /** With trace: layers + 1 entries [T, dModel], the residual stream before each block, then after the final LayerNorm. */
  hidden?: TensorOut[];
  /** With interventions. */
  diff?: ForwardDiff;
  /** With attribution: true. */
  attribution?: ForwardAttribution;
  /** With logitLens. */
  logitLens?: LogitLens;
}

export interface GenerateArgs {
  /** The prompt: at least one token id. */
  tokens: Int32Array | readonly number[];
  /** Tokens to add; prompt + maxNewTokens must fit in contextLength. */
  maxNewTokens: number;
  /**
   * 0 (default): greedy, the most likely token. Above 0: sampling from softmax(logits / temperature).
   * Greedy generations of 16 tokens or more read an 8-bit copy of the embedding for
   * speed (a quarter of its size in memory while generating), with the same tokens.
   */
  temperature?: number;
  /** Sample among the k most likely tokens only. */
  topK?: number;
  /** Sample among the smallest set of tokens whose probabilities sum to at least p (nucleus). */
  topP?: number;
  /** Seed of the sampling's random numbers (default 0): the same seed gives the same tokens. */
  seed?: number;
  /** Called with each new token and its index; returning false stops the generation there. */
  onToken?: (token: number, index: number) => boolean | void;
}

export interface GenerateResult {
  /** The new token ids, without the prompt. */
  tokens: number[];
}

/** A model living in the engine's WebAssembly memory until dispose(). */
export interface Model {
  readonly config: ModelConfig;
  /** One forward pass of a whole sequence. */
  forward(args: ModelForwardArgs): ModelForwardResult;
  /** Token after token through a key/value cache (each step runs only the new token). */
  generate(args: GenerateArgs): GenerateResult;
  /** A .safetensors file (float32, names without prefix, __metadata__ n_head) that loadModel reads back bit for bit. */
  save(): Uint8Array;
  /** A copy of one weight by its name without prefix (e.g. "h.0.attn.c_attn.weight"), in float32. */
  weight(name: string): TensorOut;
  /** An AdamW trainer that updates this model's weights in place (a new one replaces the previous). */
  trainer(options: TrainerOptions): Trainer;
  /** Frees the model's memory; any later use throws AttnScopeError. */
  dispose(): void;
  readonly disposed: boolean;
}
