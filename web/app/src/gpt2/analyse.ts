// The worker's analysis of one text (worker.ts): one forward with the visitor's
// interventions and, when their panels are open, attribution and a top-1 logit lens
// (the lens decodes every layer through the whole vocabulary, so it runs only on
// request). Every number comes from the engine's model.forward.
import type { Model } from 'attnscope';
import type { AnalysisReply, Interventions } from './protocol';

export function analyse(
  model: Model,
  tokens: number[],
  interventions: Interventions,
  attribution: boolean,
  lens: boolean,
): AnalysisReply {
  const start = performance.now();
  const f = model.forward({
    tokens,
    trace: true,
    logits: 'last', // the panels read the next token's; the lens decodes its own
    interventions,
    attribution,
    logitLens: lens ? { topK: 1 } : undefined,
  });
  const data = (list: { data: Float32Array }[]) => list.map((t) => t.data);
  return {
    lastLogits: f.logits.data,
    diffAttentions: f.diff?.attentions ? data(f.diff.attentions) : null,
    attribution: f.attribution
      ? {
          attentions: data(f.attentions!),
          rollout: data(f.attribution.rollout),
          valueNorms: data(f.attribution.valueNorms),
        }
      : null,
    lens: f.logitLens
      ? { ids: f.logitLens.ids.data, probabilities: f.logitLens.probabilities.data }
      : null,
    millis: performance.now() - start,
  };
}
