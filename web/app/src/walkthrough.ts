// The per-query walkthrough of the tutorial: for one input, its scores against every
// key, the softmax, the weighted values, and their sum; then the next input.
import type { RunResult } from './compute';
import { h } from './dom';
import { fmt, vec } from './format';
import { dotTerms, softmaxTerms, weightedValues } from './reference';

export const kWalkSteps = ['query', 'scores', 'scale & mask', 'softmax', 'weighted values', 'sum'] as const;
const kMaxKeys = 24;

function rowOf(r: RunResult, name: 'q' | 'k' | 'v' | 'scores' | 'scaled' | 'masked' | 'weights' | 'headOutputs', b: number, hd: number, i: number): Float32Array {
  const t = r.attention.trace![name];
  const X = t.shape[t.shape.length - 1];
  const T = t.shape[t.shape.length - 2];
  const base = ((b * t.shape[1] + hd) * T + i) * X;
  return t.data.subarray(base, base + X);
}

export function walkthrough(r: RunResult, b: number, hd: number, query: number, upTo: number): HTMLElement {
  const { T } = r.model;
  const tokens = r.model.tokens[b];
  const name = (j: number) => `${tokens[j]} (${j + 1})`;
  const keys = Array.from({ length: Math.min(T, kMaxKeys) }, (_, j) => j);
  const more = T > kMaxKeys ? h('li', {}, `… ${T - kMaxKeys} more keys`) : null;
  const q = rowOf(r, 'q', b, hd, query);
  const scores = rowOf(r, 'scores', b, hd, query);
  const masked = rowOf(r, 'masked', b, hd, query);
  const weights = rowOf(r, 'weights', b, hd, query);
  const out = rowOf(r, 'headOutputs', b, hd, query);
  const steps: HTMLElement[] = [];
  steps.push(h('li', {}, h('strong', {}, `Query of ${name(query)}: `), vec(q)));
  steps.push(h('li', {}, h('strong', {}, 'Scores: its query · every key'),
    h('ul', {}, ...keys.map((j) => {
      const k = rowOf(r, 'k', b, hd, j);
      const { terms } = dotTerms(q, k);
      return h('li', {}, `${name(j)}: ${terms.slice(0, 6).map((t) => fmt(t)).join(' + ')}${terms.length > 6 ? ' + …' : ''} = `, h('strong', {}, fmt(scores[j], 4)));
    }), more)));
  steps.push(h('li', {}, h('strong', {}, 'Scaled and masked: '), vec(masked, 4, kMaxKeys),
    r.model.scaleFactor !== 1 ? ` (scores × ${fmt(r.model.scaleFactor, 4)})` : ' (no scaling)'));
  const sm = softmaxTerms(masked);
  steps.push(h('li', {}, h('strong', {}, 'softmax: '), `exp(s − ${fmt(sm.max, 4)}) = ${vec(sm.exps, 4, kMaxKeys)}, sum ${fmt(sm.sum, 4)} → weights `, h('strong', {}, vec(weights, 4, kMaxKeys))));
  const vs = keys.map((j) => rowOf(r, 'v', b, hd, j));
  const wv = weightedValues(weights, vs);
  steps.push(h('li', {}, h('strong', {}, 'Weighted values: weight × value'),
    h('ul', {}, ...keys.map((j) => h('li', {}, `${name(j)}: ${fmt(weights[j], 4)} × ${vec(vs[j])} = ${vec(wv[j])}`)), more?.cloneNode(true) ?? null)));
  steps.push(h('li', {}, h('strong', {}, `Sum → output for ${name(query)}: `), h('strong', { class: 'result' }, vec(out, 4))));
  return h('ol', { class: 'walk-steps' }, ...steps.slice(0, upTo + 1));
}
