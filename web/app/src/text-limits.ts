// What the page's size limits cut from the visitor's text, in words: the state
// keeps at most kLimits.textChars characters, buildModel at most 16 sentences
// and tokenize at most kMaxTokens tokens per sentence.
import { kLimits } from './state';
import { kMaxTokens, kTokenPattern } from './tokenize';

const kMaxSentences = 16;

/** '' when nothing was cut, else a sentence naming each limit that applied. */
export function textLimitNote(text: string): string {
  const cuts: string[] = [];
  if (text.length >= kLimits.textChars) cuts.push(`only its first ${kLimits.textChars.toLocaleString('en')} characters are kept`);
  const lines = text.split(/\r?\n/).filter((l) => /\S/.test(l));
  if (lines.length > kMaxSentences) cuts.push(`only the first ${kMaxSentences} sentences are used`);
  if (lines.some((l) => (l.match(kTokenPattern)?.length ?? 0) > kMaxTokens)) cuts.push(`each sentence is cut at ${kMaxTokens.toLocaleString('en')} tokens`);
  return cuts.length ? ` The text was cut to the page’s limits: ${cuts.join('; ')}.` : '';
}
