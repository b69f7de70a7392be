// attnscope: self-attention in WebAssembly, exact and fast, with every
// intermediate kept for inspection. This entry works in browsers, workers and
// bundlers (the wasm is found next to the loader via import.meta.url); Node
// resolves to node.js, which reads the file from disk.
import { instantiate } from './load.js';
import type { AttnScope, CreateOptions } from './types.js';
export type {
  ModelConfig,
  LoadModelFromBlobOptions,
  LoadModelOptions,
  ModelForwardArgs,
  ModelForwardResult,
  GenerateArgs,
  GenerateResult,
  Model,
} from './model-types.js';
export type {
  HeadRef,
  HeadAblation,
  PatternReplacement,
  ForwardInterventions,
  ForwardDiff,
  ForwardAttribution,
  LogitLens,
} from './model-analysis-types.js';
export type {
  CreateModelArgs,
  TrainerOptions,
  TrainStepArgs,
  TrainStepResult,
  Trainer,
  AttentionBackwardArgs,
  AttentionBackwardResult,
} from './train-types.js';

export { AttnScopeError } from './errors.js';
export { hasRelaxedSimd } from './load.js';
// Listed one by one (not `export type *`) so TypeScript before 5.0 reads the declarations.
export type {
  NestedNumbers,
  TensorInput,
  TensorOut,
  FlagsOut,
  MaskSpec,
  RopeSpec,
  BiasSpec,
  ScaleSpec,
  AttentionCommonOptions,
  SelfAttentionArgs,
  SelfAttentionTrace,
  SelfAttentionResult,
  AttentionArgs,
  AttentionTrace,
  AttentionResult,
  PositionalEncodingArgs,
  LinearArgs,
  LayerNormArgs,
  Activation,
  FeedForwardArgs,
  ResidualAddArgs,
  NormParams,
  LinearParams,
  BlockAttentionParams,
  ProjectionWeights,
  TransformerBlockArgs,
  TransformerBlockResult,
  RmsNormArgs,
  SwigluArgs,
  LlamaBlockArgs,
  LlamaBlockResult,
  MemoryUsage,
  AttnScope,
  CreateOptions,
  SimdFlavour,
} from './types.js';

/** Version of the package (the engine reports its core's as `engine.version`). */
export const version = '0.1.0';

/**
 * Loads the WebAssembly module and returns a ready engine.
 *
 * @example
 * const engine = await createAttnScope();
 * const r = engine.selfAttention({ x, shape: [T, C], wq, wk, wv });
 *
 * @param options - which build to load (`simd`) and where to find it (default: next to this module).
 * @throws AttnScopeError when the wasm cannot be fetched or instantiated.
 */
export function createAttnScope(options?: CreateOptions): Promise<AttnScope> {
  return instantiate(options);
}
