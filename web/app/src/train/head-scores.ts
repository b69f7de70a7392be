// The trained model's heads scored for the patterns with a name (gpt2/named-heads.ts), on
// the task's held-out sequences and by the same rule as the KJV model's card: for each
// query, the weight a head gives to the keys the pattern picks, averaged over the queries
// that have such keys, next to chance (the same weight spread evenly over the keys a
// causal query sees). For induction, also the content check: the same queries once every
// earlier copy of the query's own token is changed into a token the sequence does not
// hold. The induction keys keep their tokens and places, so a head that finds them by
// position keeps its weight there, and one that finds them by the token before them loses it.
import { kPatterns, type HeadCard, type Pattern } from '../gpt2/named-heads';

/** Attention weights of every layer, each (H, T, T), for one sequence. */
export type Attend = (tokens: number[]) => Float32Array[];

export interface TrainedHeads {
  card: HeadCard;
  /**
   * Per head, layer by layer: the induction share once the earlier copies of each query's
   * token are changed (null until measured: it takes a forward pass per query).
   */
  inductionChanged: number[] | null;
  sequences: number;
}

/** Earlier positions holding the token of query q. */
function earlierCopies(tokens: number[], q: number): number[] {
  const at: number[] = [];
  for (let k = 0; k < q; k++) if (tokens[k] === tokens[q]) at.push(k);
  return at;
}

/** The keys `pattern` picks for query q (none: the query is not scored for it). */
export function patternKeys(pattern: Pattern, tokens: number[], q: number): number[] {
  if (q < 1) return [];
  switch (pattern) {
    case 'previousToken':
      return [q - 1];
    case 'firstToken':
      return [0];
    case 'sameWord':
      return earlierCopies(tokens, q);
    case 'induction':
      // The token after each earlier copy; a copy just before the query would make the
      // query its own key, which says nothing about looking back.
      return earlierCopies(tokens, q)
        .map((k) => k + 1)
        .filter((k) => k < q);
  }
}

/** Weight of head h of a layer's (H, T, T) attention from query q on `keys`. */
function mass(weights: Float32Array, T: number, h: number, q: number, keys: number[]): number {
  let sum = 0;
  for (const k of keys) sum += weights[(h * T + q) * T + k]!;
  return sum;
}

/** One held-out sequence and the attention weights of every layer on it, each (H, T, T). */
export interface TracedRun {
  tokens: number[];
  attentions: Float32Array[];
}

/** Scores every head for every pattern on traced held-out sequences. */
export function scoreHeads(runs: TracedRun[], layers: number, heads: number): TrainedHeads {
  const shares = Object.fromEntries(
    kPatterns.map((p) => [p, new Float64Array(layers * heads)]),
  ) as Record<Pattern, Float64Array>;
  const chance = Object.fromEntries(kPatterns.map((p) => [p, 0])) as Record<Pattern, number>;
  const counts = Object.fromEntries(kPatterns.map((p) => [p, 0])) as Record<Pattern, number>;
  for (const { tokens, attentions } of runs) {
    const T = tokens.length;
    for (let q = 1; q < T; q++) {
      for (const p of kPatterns) {
        const keys = patternKeys(p, tokens, q);
        if (keys.length === 0) continue;
        for (let l = 0; l < layers; l++)
          for (let h = 0; h < heads; h++)
            shares[p][l * heads + h] += mass(attentions[l]!, T, h, q, keys);
        chance[p] += keys.length / (q + 1);
        counts[p]++;
      }
    }
  }
  const mean = (sum: number, p: Pattern) => (counts[p] > 0 ? sum / counts[p] : 0);
  const card: HeadCard = {
    chance: Object.fromEntries(kPatterns.map((p) => [p, mean(chance[p], p)])) as Record<
      Pattern,
      number
    >,
    heads: Array.from({ length: layers * heads }, (_, i) => ({
      head: `L${Math.floor(i / heads)}H${i % heads}`,
      ...(Object.fromEntries(kPatterns.map((p) => [p, mean(shares[p][i]!, p)])) as Record<
        Pattern,
        number
      >),
    })),
  };
  return { card, inductionChanged: null, sequences: runs.length };
}

/**
 * The induction share of every head once, for each scored query, every earlier copy of its
 * token becomes `stranger` (a token the sequence does not hold): one forward per query.
 * Sequences that hold every token of the vocabulary are skipped.
 */
export function inductionWithCopiesChanged(
  attend: Attend,
  sequences: number[][],
  layers: number,
  heads: number,
  vocabSize: number,
): number[] {
  const shares = new Float64Array(layers * heads);
  let count = 0;
  for (const tokens of sequences) {
    const stranger = Array.from({ length: vocabSize }, (_, v) => v).find(
      (v) => !tokens.includes(v),
    );
    if (stranger === undefined) continue;
    for (let q = 1; q < tokens.length; q++) {
      const keys = patternKeys('induction', tokens, q);
      if (keys.length === 0) continue;
      const changed = tokens.slice();
      for (const k of keys) changed[k - 1] = stranger;
      const attentions = attend(changed);
      for (let l = 0; l < layers; l++)
        for (let h = 0; h < heads; h++)
          shares[l * heads + h] += mass(attentions[l]!, tokens.length, h, q, keys);
      count++;
    }
  }
  return Array.from(shares, (s) => (count > 0 ? s / count : 0));
}
