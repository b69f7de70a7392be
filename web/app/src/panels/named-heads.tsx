// Beside the head choice while the KJV model is loaded: the heads whose pattern has a
// name, from the model's card (gpt2/named-heads.ts), each a button that shows that head
// in every view. The strongest is always in view; the fold (its summary is the label, to
// keep this one line) lists every named head, says
// plainly which patterns no head has, and hands over to the Model view's head search,
// which measures the same kind of score on the visitor's own text. A model trained in the
// page and handed to it has its heads named the same way, from the scores measured on the
// task's held-out sequences when training stopped (train/head-scores.ts).
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
  type HeadCard,
  type HeadScore,
} from '../gpt2/named-heads';
import { showTab, view } from '../store';
import { handedHeads } from '../train/state';

function HeadButton({ s, card }: { s: HeadScore; card: string }) {
  const current = gpt2Layer.value === s.layer && view.value.sel.head === s.head;
  return (
    <button
      type="button"
      class="small named-head"
      data-layer={String(s.layer)}
      data-head={String(s.head)}
      data-pattern={s.pattern}
      aria-pressed={current}
      title={`${cardName(s)} in the ${card}, which counts from 0`}
      onClick={() => selectLayerAndHead(s.layer, s.head)}
    >
      {`${headName(s)} ${describe(s)}`}
    </button>
  );
}

/** The scores of the page's model: the KJV card, or those of the model trained here. */
function scoresShown(): { card?: HeadCard; scoredOn: string; from: string } | null {
  const loaded = loadedGpt2.value;
  if (loaded?.source === 'kjv') return { scoredOn: kScoredOn, from: 'Scores from the model’s card' };
  const handed = handedHeads.value;
  if (loaded && handed?.loaded === loaded)
    return {
      card: handed.heads.card,
      scoredOn: handed.scoredOn,
      from: 'Scores of the model trained here, when training stopped',
    };
  return null;
}

export function NamedHeads() {
  const shown = scoresShown();
  if (!shown) return null;
  const { card, scoredOn, from } = shown;
  const cardLabel = card ? 'trained model’s scores' : 'model’s card';
  const named = namedHeads(card);
  return (
    <div class="named-heads" id="named-heads" role="group" aria-label="Heads with a named pattern">
      <details class="named-more">
        <summary>Named heads</summary>
        <p class="hint">
          {`${from}, measured on ${scoredOn}: the mean weight a head’s queries give to the keys the pattern names, against chance (weight spread evenly over the keys a query sees). A head is named from ${kNamedRatio}× chance; under a quarter of its weight it is weak, from a half strong.`}
        </p>
        {kPatterns.map((p) => {
          const heads = namedFor(p, card);
          return heads.length === 0 ? (
            <p class="hint named-none" data-pattern={p}>
              {noneSaid(p, card)}
            </p>
          ) : (
            <ul class="named-list" data-pattern={p}>
              {heads.map((s) => (
                <li>
                  <HeadButton s={s} card={cardLabel} />
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
      {named.length > 0 && <HeadButton s={named[0]} card={cardLabel} />}
    </div>
  );
}
