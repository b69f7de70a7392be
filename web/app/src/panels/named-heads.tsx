// Beside the head choice while the KJV model is loaded: the heads whose pattern has a
// name, from the model's card (gpt2/named-heads.ts), each a button that shows that head
// in every view. The strongest is always in view; the fold (its summary is the label, to
// keep this one line) lists every named head, says
// plainly which patterns no head has, and hands over to the Model view's head search,
// which measures the same kind of score on the visitor's own text.
import { gpt2Layer, loadedGpt2, selectLayerAndHead } from '../gpt2/state';
import {
  cardName,
  describe,
  headName,
  kNamedRatio,
  kPatterns,
  kScoredOn,
  namedFor,
  namedHeads,
  noneSaid,
  type HeadScore,
} from '../gpt2/named-heads';
import { showTab, view } from '../store';

function HeadButton({ s }: { s: HeadScore }) {
  const current = gpt2Layer.value === s.layer && view.value.sel.head === s.head;
  return (
    <button
      type="button"
      class="small named-head"
      data-layer={String(s.layer)}
      data-head={String(s.head)}
      data-pattern={s.pattern}
      aria-pressed={current}
      title={`${cardName(s)} in the model’s card, which counts from 0`}
      onClick={() => selectLayerAndHead(s.layer, s.head)}
    >
      {`${headName(s)} ${describe(s)}`}
    </button>
  );
}

export function NamedHeads() {
  if (loadedGpt2.value?.source !== 'kjv') return null;
  const named = namedHeads();
  return (
    <div class="named-heads" id="named-heads" role="group" aria-label="Heads with a named pattern">
      <details class="named-more">
        <summary>Named heads</summary>
        <p class="hint">
          {`Scores from the model’s card, measured on ${kScoredOn}: the mean weight a head’s queries give to the keys the pattern names, against chance (weight spread evenly over the keys a query sees). A head is named from ${kNamedRatio}× chance; under a quarter of its weight it is weak, from a half strong.`}
        </p>
        {kPatterns.map((p) => {
          const heads = namedFor(p);
          return heads.length === 0 ? (
            <p class="hint named-none" data-pattern={p}>
              {noneSaid(p)}
            </p>
          ) : (
            <ul class="named-list" data-pattern={p}>
              {heads.map((s) => (
                <li>
                  <HeadButton s={s} />
                </li>
              ))}
            </ul>
          );
        })}
        <p class="hint">
          On your own text the same kind of score is measured again by the{' '}
          <button type="button" class="link" onClick={() => showTab('model')}>
            Model view’s head search
          </button>
          .
        </p>
      </details>
      {named.length > 0 && <HeadButton s={named[0]} />}
    </div>
  );
}
