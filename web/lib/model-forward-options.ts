// The analysis options of model.forward (interventions, attribution, logit
// lens): checked and turned into the call inputs of the core's gpt2_forward
// (cpp/bindings/models.cpp), and their results gathered back. Ranges are
// checked here so that a message names the caller's own argument; the core
// checks the same again (and the duplicates).
import type { CallOutputs, CallTensor } from './call.js';
import type { ForwardAttribution, ForwardDiff, LogitLens } from './model-analysis-types.js';
import type { ModelConfig, ModelForwardArgs } from './model-types.js';
import { describe, fail, integerIn, own } from './tensors.js';
import type { TensorOut } from './types.js';

/** What forward asks of the core beyond the logits. */
export interface ForwardAnalysis {
  counts: { ablate: number[]; replace: number[]; maskTokens: number[] };
  attribution: boolean;
  logitLensTopK: number;
  /** Heads whose output is changed, patterns replaced, tokens masked: a clean run is made too. */
  intervenes: boolean;
}

const kAblateModes = ['zero', 'mean'] as const;

function plainObject(fn: string, name: string, value: unknown, keys: string[]): void {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    fail(fn, `${name} must be an object, got ${describe(value)}`);
  for (const key of Object.keys(value)) {
    if (!keys.includes(key))
      fail(fn, `${name} has an unknown field '${key}' (expected ${keys.join(', ')})`);
  }
}

function list(fn: string, name: string, value: unknown): unknown[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) fail(fn, `${name} must be an array, got ${describe(value)}`);
  return value;
}

/** [layer, head] of a head reference such as { layer, head }. */
function headOf(fn: string, name: string, value: unknown, config: ModelConfig, extra: string[]) {
  plainObject(fn, name, value, ['layer', 'head', ...extra]);
  return [
    integerIn(fn, `${name}.layer`, own(value, 'layer'), 0, config.layers - 1),
    integerIn(fn, `${name}.head`, own(value, 'head'), 0, config.heads - 1),
  ];
}

/** Checks forward's analysis options against the config and T tokens. */
export function forwardAnalysis(
  fn: string,
  args: ModelForwardArgs,
  config: ModelConfig,
  T: number,
  trace: boolean,
): ForwardAnalysis {
  const counts = { ablate: [] as number[], replace: [] as number[], maskTokens: [] as number[] };
  const interventions = own(args, 'interventions');
  if (interventions !== undefined) {
    const name = 'interventions';
    plainObject(fn, name, interventions, ['ablate', 'maskTokens', 'replace']);
    list(fn, `${name}.ablate`, own(interventions, 'ablate')).forEach((entry, i) => {
      const at = `${name}.ablate[${i}]`;
      const head = headOf(fn, at, entry, config, ['mode']);
      const mode = own(entry, 'mode') ?? 'zero';
      const code = kAblateModes.indexOf(mode as (typeof kAblateModes)[number]);
      if (code < 0)
        fail(
          fn,
          `${at}.mode must be 'zero' or 'mean', got ${typeof mode === 'string' ? `'${mode}'` : describe(mode)}`,
        );
      counts.ablate.push(...head, code);
    });
    list(fn, `${name}.replace`, own(interventions, 'replace')).forEach((entry, i) => {
      const at = `${name}.replace[${i}]`;
      const head = headOf(fn, at, entry, config, ['from']);
      counts.replace.push(...head, ...headOf(fn, `${at}.from`, own(entry, 'from'), config, []));
    });
    list(fn, `${name}.maskTokens`, own(interventions, 'maskTokens')).forEach((p, i) => {
      counts.maskTokens.push(integerIn(fn, `${name}.maskTokens[${i}]`, p, 0, T - 1));
    });
  }
  const attribution = own(args, 'attribution');
  if (attribution !== undefined && typeof attribution !== 'boolean')
    fail(fn, `attribution must be a boolean, got ${describe(attribution)}`);
  const lens = own(args, 'logitLens');
  let logitLensTopK = 0;
  if (lens !== undefined) {
    plainObject(fn, 'logitLens', lens, ['topK']);
    const topK = own(lens, 'topK') ?? Math.min(5, config.vocabSize);
    logitLensTopK = integerIn(fn, 'logitLens.topK', topK, 1, config.vocabSize);
  }
  if (!trace && (attribution === true || logitLensTopK > 0))
    fail(fn, `${attribution === true ? 'attribution' : 'logitLens'} needs trace: true`);
  const intervenes = Object.values(counts).some((c) => c.length > 0);
  return { counts, attribution: attribution === true, logitLensTopK, intervenes };
}

/** Outputs named "0", "1", … as an array. */
export function layerList(outputs: CallOutputs | undefined): TensorOut[] {
  if (!outputs) return [];
  return Object.keys(outputs)
    .map(Number)
    .sort((a, b) => a - b)
    .map((l) => outputs[String(l)] as CallTensor);
}

/** The diff, attribution and logit lens of the core's outputs, those present. */
export function analysisResults(out: CallOutputs): {
  diff?: ForwardDiff;
  attribution?: ForwardAttribution;
  logitLens?: LogitLens;
} {
  const results: { diff?: ForwardDiff; attribution?: ForwardAttribution; logitLens?: LogitLens } =
    {};
  const diff = out.diff as CallOutputs | undefined;
  if (diff) {
    results.diff = { logits: diff.logits as CallTensor };
    if (diff.attentions) results.diff.attentions = layerList(diff.attentions as CallOutputs);
  }
  const attribution = out.attribution as CallOutputs | undefined;
  if (attribution) {
    results.attribution = {
      rollout: layerList(attribution.rollout as CallOutputs),
      valueNorms: layerList(attribution.valueNorms as CallOutputs),
    };
  }
  const lens = out.logitLens as CallOutputs | undefined;
  if (lens) {
    const ids = lens.ids as CallTensor;
    results.logitLens = {
      ids: { data: Int32Array.from(ids.data), shape: ids.shape },
      probabilities: lens.probabilities as CallTensor,
    };
  }
  return results;
}

/**
 * forward's `hidden`: which entries of the residual stream to return, by
 * index in [0, layers] (null: all of them, the default). Needs trace.
 */
export function hiddenEntries(
  fn: string,
  value: unknown,
  config: ModelConfig,
  trace: boolean,
): boolean[] | null {
  if (value === undefined || value === 'all') return null;
  if (!Array.isArray(value))
    fail(fn, `hidden must be 'all' or an array of entry indices, got ${describe(value)}`);
  if (!trace) fail(fn, 'hidden needs trace');
  const wanted = Array.from({ length: config.layers + 1 }, () => false);
  value.forEach((entry, i) => {
    wanted[integerIn(fn, `hidden[${i}]`, entry, 0, config.layers)] = true;
  });
  return wanted;
}

/** `hidden` with only the wanted entries (the others left as holes), in place. */
export function keepHidden(hidden: TensorOut[], wanted: boolean[] | null): TensorOut[] {
  hidden.forEach((_, l) => {
    if (wanted && !wanted[l]) delete hidden[l];
  });
  return hidden;
}
