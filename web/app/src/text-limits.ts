// What of the visitor's text the page computes, in words. The text box always
// keeps everything; only the computation is limited (kMaxSentences lines of
// kMaxTokens tokens each).
import { kMaxSentences, kMaxTokens, type ComputedPart } from './tokenize';

const n = (x: number) => x.toLocaleString('en');

/** '' when the whole text is computed, else a sentence saying how much is used. */
export function textLimitNote(part: ComputedPart): string {
  if (!part.sentencesCut && !part.tokensCut) return '';
  const limits: string[] = [];
  if (part.sentencesCut)
    limits.push(`the first ${kMaxSentences} of ${n(part.totalSentences)} sentences`);
  if (part.tokensCut) limits.push(`at most ${n(kMaxTokens)} tokens per sentence`);
  return ` Computing ${n(part.usedTokens)} of ${n(part.totalTokens)} tokens (${limits.join(', ')}); the rest is kept in the box.`;
}
