// The KJV model's heads whose pattern has a name, from the scores its card publishes
// (models/kjv/heads.json, measured by scripts/model/head-patterns.mjs on held-out verses):
// the mean weight a query gives to the previous token, the first token, earlier copies of
// its own token, and the induction key, each next to chance (attention spread evenly over
// the keys a causal query sees). A head is named only when its score is at least twice
// chance; how strong it is then depends on the share of its weight, because a head can be
// many times chance while still spreading most of its weight elsewhere. A model trained
// in the page gets a card of the same form (train/head-scores.ts); every function below
// reads the KJV card unless given another.
import kjvCard from '../../../../models/kjv/heads.json';

export const kPatterns = ['previousToken', 'firstToken', 'sameWord', 'induction'] as const;
export type Pattern = (typeof kPatterns)[number];

/** What a head with the pattern attends to, after "leans to". */
export const kPatternNames: Record<Pattern, string> = {
  previousToken: 'the previous token',
  firstToken: 'the first token',
  sameWord: 'earlier copies of its own token',
  induction: 'the token after an earlier copy of its own (induction)',
};

/** A head is named for a pattern from this many times chance. */
export const kNamedRatio = 2;

export type Strength = 'weak' | 'clear' | 'strong';

/** A model's scores: chance per pattern, and each head's share (named L{layer}H{head}). */
export interface HeadCard {
  chance: Record<Pattern, number>;
  heads: ({ head: string } & Record<Pattern, number>)[];
}

const card: HeadCard = kjvCard;

export interface HeadScore {
  layer: number; // 0-based, as in the card's L3H1
  head: number;
  pattern: Pattern;
  share: number; // mean weight on the pattern's keys, 0–1
  chance: number;
  ratio: number; // share / chance
}

/** Weak below a quarter of the head's weight, strong from a half. */
export function strengthOf(share: number): Strength {
  return share >= 0.5 ? 'strong' : share >= 0.25 ? 'clear' : 'weak';
}

/** Every head's score for `pattern`, highest first. */
export function scoresFor(pattern: Pattern, from: HeadCard = card): HeadScore[] {
  const chance = from.chance[pattern];
  return from.heads
    .map((h) => {
      const [, layer, head] = /^L(\d+)H(\d+)$/.exec(h.head)!.map(Number);
      // A pattern no query had keys for (chance 0) names no head.
      const ratio = chance > 0 ? h[pattern] / chance : 0;
      return { layer, head, pattern, share: h[pattern], chance, ratio };
    })
    .sort((a, b) => b.share - a.share || a.layer - b.layer || a.head - b.head);
}

/** The heads named for `pattern` (at least kNamedRatio × chance), strongest first. */
export const namedFor = (pattern: Pattern, from: HeadCard = card) =>
  scoresFor(pattern, from).filter((s) => s.ratio >= kNamedRatio);

/** Every named head of every pattern, strongest first. */
export const namedHeads = (from: HeadCard = card): HeadScore[] =>
  kPatterns.flatMap((p) => namedFor(p, from)).sort((a, b) => b.ratio - a.ratio);

export const percent = (share: number) =>
  `${(share * 100).toLocaleString('en', { maximumFractionDigits: share < 0.1 ? 1 : 0 })} %`;
export const times = (ratio: number) => `${ratio.toFixed(1)}×`;
/** The page's name of a head (counting from 1, as its menus do). */
export const headName = (s: { layer: number; head: number }) =>
  `layer ${s.layer + 1}, head ${s.head + 1}`;
/** The card's name (counting from 0). */
export const cardName = (s: { layer: number; head: number }) => `L${s.layer}H${s.head}`;

/** "leans to the previous token: 12 % of its weight, 3.5× chance (weak)". */
export function describe(s: HeadScore): string {
  return `leans to ${kPatternNames[s.pattern]}: ${percent(s.share)} of its weight, ${times(s.ratio)} chance (${strengthOf(s.share)})`;
}

/** For a pattern no head has: how close the best head comes. */
export function noneSaid(pattern: Pattern, from: HeadCard = card): string {
  const best = scoresFor(pattern, from)[0]!;
  const where =
    best.ratio < 1
      ? `every head gives it less than chance (at most ${percent(best.share)}, chance ${percent(best.chance)})`
      : `the most is ${headName(best)}’s ${percent(best.share)}, ${times(best.ratio)} chance: too close to chance to name`;
  return `No head leans to ${kPatternNames[pattern]}: ${where}.`;
}

/** Where the card's scores come from. */
export const kScoredOn = 'held-out verses (chapters the model never trained on)';
