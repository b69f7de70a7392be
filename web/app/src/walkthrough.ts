// The per-query walkthrough of the tutorial: for one input, its scores against every
// key, the softmax, the weighted values, and their sum; then the next input.
import type { RunResult } from './compute';
import { h } from './dom';
import { fmt, vec } from './format';
import { dotTerms, softmaxTerms, weightedValues } from './reference';
import { rowOf } from './tensor';

type TraceName = 'q' | 'k' | 'v' | 'scores' | 'scaled' | 'masked' | 'weights' | 'headOutputs';
const rowIn = (r: RunResult, name: TraceName, b: number, hd: number, i: number) => rowOf(r.attention.trace![name], b, hd, i);

export const kWalkSteps = ['query', 'scores', 'scale & mask', 'softmax', 'weighted values', 'sum'] as const;
const kMaxKeys = 24;

export function walkthrough(r: RunResult, b: number, hd: number, query: number, upTo: number): HTMLElement {
  const { T } = r.model;
  const tokens = r.model.tokens[b];
  const name = (j: number) => `${tokens[j]} (${j + 1})`;
  const keys = Array.from({ length: Math.min(T, kMaxKeys) }, (_, j) => j);
  const more = T > kMaxKeys ? h('li', {}, `… ${T - kMaxKeys} more keys`) : null;
  const q = rowIn(r, 'q', b, hd, query);
  const scores = rowIn(r, 'scores', b, hd, query);
  const masked = rowIn(r, 'masked', b, hd, query);
  const weights = rowIn(r, 'weights', b, hd, query);
  const out = rowIn(r, 'headOutputs', b, hd, query);
  const steps: HTMLElement[] = [];
  steps.push(h('li', {}, h('strong', {}, `Query of ${name(query)}: `), vec(q)));
  steps.push(h('li', {}, h('strong', {}, 'Scores: its query · every key'),
    h('ul', { tabindex: 0, 'aria-label': `Scores of ${name(query)} against every key` }, ...keys.map((j) => {
      const k = rowIn(r, 'k', b, hd, j);
      const { terms } = dotTerms(q, k);
      return h('li', {}, `${name(j)}: ${terms.slice(0, 6).map((t) => fmt(t)).join(' + ')}${terms.length > 6 ? ' + …' : ''} = `, h('strong', {}, fmt(scores[j], 4)));
    }), more)));
  steps.push(h('li', {}, h('strong', {}, 'Scaled and masked: '), vec(masked, 4, kMaxKeys),
    r.model.scaleFactor !== 1 ? ` (scores × ${fmt(r.model.scaleFactor, 4)})` : ' (no scaling)'));
  const sm = softmaxTerms(masked);
  steps.push(h('li', {}, h('strong', {}, 'softmax: '), `exp(s − ${fmt(sm.max, 4)}) = ${vec(sm.exps, 4, kMaxKeys)}, sum ${fmt(sm.sum, 4)} → weights `, h('strong', {}, vec(weights, 4, kMaxKeys))));
  const vs = keys.map((j) => rowIn(r, 'v', b, hd, j));
  const wv = weightedValues(weights, vs);
  steps.push(h('li', {}, h('strong', {}, 'Weighted values: weight × value'),
    h('ul', { tabindex: 0, 'aria-label': 'Weighted values' }, ...keys.map((j) => h('li', {}, `${name(j)}: ${fmt(weights[j], 4)} × ${vec(vs[j])} = ${vec(wv[j])}`)), more?.cloneNode(true) ?? null)));
  steps.push(h('li', {}, h('strong', {}, `Sum → output for ${name(query)}: `), h('strong', { class: 'result' }, vec(out, 4))));
  return h('ol', { class: 'walk-steps' }, ...steps.slice(0, upTo + 1));
}
