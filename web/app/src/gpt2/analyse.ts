// The worker's analysis of one text (worker.ts): a clean forward for the next-token
// probabilities before, and one forward with the visitor's interventions, attribution
// and a top-1 logit lens. Every number comes from the engine's model.forward.
import type { Model } from 'attnscope';
import type { AnalysisReply, Interventions } from './protocol';

export function analyse(
  model: Model,
  tokens: number[],
  interventions: Interventions,
): AnalysisReply {
  const start = performance.now();
  const V = model.config.vocabSize;
  const last = (data: Float32Array) => data.slice((tokens.length - 1) * V);
  const changed = model.forward({
    tokens,
    trace: true,
    interventions,
    attribution: true,
    logitLens: { topK: 1 },
  });
  const diff = changed.diff;
  // Without interventions the run is the clean one. Traced like the page's own forward,
  // so "before" equals the next-token panel's numbers exactly.
  const clean = diff ? model.forward({ tokens, trace: true }).logits.data : changed.logits.data;
  return {
    cleanLastLogits: last(clean),
    lastLogits: last(changed.logits.data),
    diffAttentions: diff?.attentions?.map((a) => a.data) ?? null,
    attentions: changed.attentions!.map((a) => a.data),
    rollout: changed.attribution!.rollout.map((a) => a.data),
    valueNorms: changed.attribution!.valueNorms.map((a) => a.data),
    lensIds: changed.logitLens!.ids.data,
    lensProbabilities: changed.logitLens!.probabilities.data,
    millis: performance.now() - start,
  };
}
