// The heads of the model being trained whose pattern has a name, scored on the held-out
// batch by the KJV card's rule (train/head-scores.ts, gpt2/named-heads.ts): each a button
// that selects the head in the maps. Once training stops, the content check of the
// strongest induction head: its weight on the same keys once the earlier copies of each
// query's token are changed, which tells a head that reads the token before a key from one
// that looks a fixed distance back.
import {
  describe,
  headName,
  kNamedRatio,
  namedHeads,
  percent,
  type HeadScore,
  type Pattern,
} from '../../gpt2/named-heads';
import type { TrainedHeads } from '../../train/head-scores';

/** The short name a head map's caption gives a pattern. */
export const kPatternShort: Record<Pattern, string> = {
  previousToken: 'previous token',
  firstToken: 'first token',
  sameWord: 'same token',
  induction: 'induction',
};

/** Each head's strongest named pattern, by its place layer × H + head. */
export function namedByHead(heads: TrainedHeads, H: number): Map<number, HeadScore> {
  const perHead = new Map<number, HeadScore>();
  for (const s of namedHeads(heads.card)) {
    const at = s.layer * H + s.head;
    if (!perHead.has(at)) perHead.set(at, s); // strongest first
  }
  return perHead;
}

/**
 * Whether an induction head failed the content check: it keeps at least half its weight on
 * the keys once the earlier copies are changed, so it finds them by where they sit.
 */
export function byPosition(heads: TrainedHeads, H: number, s: HeadScore): boolean {
  const changed = heads.inductionChanged?.[s.layer * H + s.head];
  return s.pattern === 'induction' && changed !== undefined && changed >= s.share / 2;
}

/** The caption's name of a head's pattern. */
export const shortName = (heads: TrainedHeads, H: number, s: HeadScore) =>
  byPosition(heads, H, s) ? 'fixed distance' : kPatternShort[s.pattern];

/** What the content check says of the strongest induction head. */
function contentCheck(best: HeadScore, changed: number): string {
  const found =
    changed < best.share / 2
      ? 'it finds those keys by the letter before them, not by where they sit'
      : 'it finds those keys mostly by where they sit, not by the letter before them';
  return `With every earlier copy of each query’s letter changed into a letter the sequence does not hold, ${headName(best)} puts ${percent(changed)} of its weight on the same keys instead of ${percent(best.share)}: ${found}.`;
}

export function TrainedHeadsList({
  heads,
  H,
  selected,
  onSelect,
}: {
  heads: TrainedHeads;
  /** Heads per layer. */
  H: number;
  selected: { layer: number; head: number };
  onSelect: (layer: number, head: number) => void;
}) {
  const named = namedHeads(heads.card);
  const induction = named.filter((s) => s.pattern === 'induction').sort((a, b) => b.share - a.share);
  const best = induction[0];
  const changed = best && heads.inductionChanged ? heads.inductionChanged[best.layer * H + best.head] : undefined;
  return (
    <div class="train-named" id="train-named">
      <h3>Named heads</h3>
      <p class="hint">
        {`Measured on the ${heads.sequences} held-out sequences as the KJV model’s card is: the mean weight a head’s queries give to the keys a pattern names, against chance; named from ${kNamedRatio}× chance.`}
      </p>
      {named.length === 0 ? (
        <p class="hint" id="train-named-none">
          No head leans to a named pattern yet.
        </p>
      ) : (
        <ul class="named-list">
          {named.map((s) => (
            <li key={`${s.pattern}-${s.layer}-${s.head}`}>
              <button
                type="button"
                class="small named-head"
                data-layer={String(s.layer)}
                data-head={String(s.head)}
                data-pattern={s.pattern}
                data-share={String(s.share)}
                data-ratio={String(s.ratio)}
                aria-pressed={selected.layer === s.layer && selected.head === s.head}
                onClick={() => onSelect(s.layer, s.head)}
              >
                {`${headName(s)} ${describe(s)}${byPosition(heads, H, s) ? '; but by position, not by the letter (the check below)' : ''}`}
              </button>
            </li>
          ))}
        </ul>
      )}
      {best && changed !== undefined && (
        <p class="train-content-check" id="train-content-check" data-changed={String(changed)}>
          {contentCheck(best, changed)}
        </p>
      )}
    </div>
  );
}
