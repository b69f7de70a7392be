// The per-query walkthrough of the tutorial: for one input, its scores against every
// key, the softmax, the weighted values, and their sum; then the next input. A
// component, so a new result patches the numbers in place instead of rebuilding the list.
import type { RunResult } from './compute';
import { fmt, vec } from './format';
import { dotTerms, softmaxTerms, weightedValues } from './reference';
import { rowOf } from './tensor';

type TraceName = 'q' | 'k' | 'v' | 'scores' | 'scaled' | 'masked' | 'weights' | 'headOutputs';
const rowIn = (r: RunResult, name: TraceName, b: number, hd: number, i: number) => rowOf(r.attention.trace![name], b, hd, i);

export const kWalkSteps = ['query', 'scores', 'scale & mask', 'softmax', 'weighted values', 'sum'] as const;
const kMaxKeys = 24;

export function WalkSteps({ r, b, hd, query, upTo }: { r: RunResult; b: number; hd: number; query: number; upTo: number }) {
  const { T } = r.model;
  const tokens = r.model.tokens[b];
  const name = (j: number) => `${tokens[j]} (${j + 1})`;
  const keys = Array.from({ length: Math.min(T, kMaxKeys) }, (_, j) => j);
  const more = () => T > kMaxKeys && <li>{`… ${T - kMaxKeys} more keys`}</li>;
  const q = rowIn(r, 'q', b, hd, query);
  const scores = rowIn(r, 'scores', b, hd, query);
  const masked = rowIn(r, 'masked', b, hd, query);
  const weights = rowIn(r, 'weights', b, hd, query);
  const out = rowIn(r, 'headOutputs', b, hd, query);
  const steps = [
    () => <li><strong>{`Query of ${name(query)}: `}</strong>{vec(q)}</li>,
    () => (
      <li><strong>Scores: its query · every key</strong>
        <ul tabIndex={0} aria-label={`Scores of ${name(query)} against every key`}>
          {keys.map((j) => {
            const { terms } = dotTerms(q, rowIn(r, 'k', b, hd, j));
            return <li>{`${name(j)}: ${terms.slice(0, 6).map((t) => fmt(t)).join(' + ')}${terms.length > 6 ? ' + …' : ''} = `}<strong>{fmt(scores[j], 4)}</strong></li>;
          })}
          {more()}
        </ul>
      </li>
    ),
    () => <li><strong>Scaled and masked: </strong>{vec(masked, 4, kMaxKeys)}{r.model.scaleFactor !== 1 ? ` (scores × ${fmt(r.model.scaleFactor, 4)})` : ' (no scaling)'}</li>,
    () => {
      const sm = softmaxTerms(masked);
      return <li><strong>softmax: </strong>{`exp(s − ${fmt(sm.max, 4)}) = ${vec(sm.exps, 4, kMaxKeys)}, sum ${fmt(sm.sum, 4)} → weights `}<strong>{vec(weights, 4, kMaxKeys)}</strong></li>;
    },
    () => {
      const vs = keys.map((j) => rowIn(r, 'v', b, hd, j));
      const wv = weightedValues(weights, vs);
      return (
        <li><strong>Weighted values: weight × value</strong>
          <ul tabIndex={0} aria-label="Weighted values">
            {keys.map((j) => <li>{`${name(j)}: ${fmt(weights[j], 4)} × ${vec(vs[j])} = ${vec(wv[j])}`}</li>)}
            {more()}
          </ul>
        </li>
      );
    },
    () => <li><strong>{`Sum → output for ${name(query)}: `}</strong><strong class="result">{vec(out, 4)}</strong></li>,
  ];
  return <ol class="walk-steps">{steps.slice(0, upTo + 1).map((step) => step())}</ol>;
}
