// GPT-2's byte-level BPE (gpt-tokenizer's r50k_base, GPT-2's own vocabulary), loaded
// only once a model is. Tokens are shown as the visitor's own text: each token's bytes
// go through one streaming UTF-8 decoder, so a character split over tokens appears on
// the token that completes it, and spaces and line breaks are drawn visibly.
type Encoding = typeof import('gpt-tokenizer/encoding/r50k_base');
let encoding: Encoding | null = null;

export async function loadTokenizer(): Promise<void> {
  encoding ??= await import('gpt-tokenizer/encoding/r50k_base');
}

function tokenizer(): Encoding {
  if (!encoding) throw new Error('the GPT-2 tokenizer is not loaded');
  return encoding;
}

export const encodeGpt2 = (text: string): number[] => tokenizer().encode(text);
export const decodeGpt2 = (tokens: number[]): string => tokenizer().decode(tokens);

// The package's public API decodes whole strings only; its per-token byte generator is
// what keeps a split character apart from its neighbours.
type ByteSource = {
  decodeNativeGenerator(tokens: Iterable<number>): Generator<Uint8Array | string>;
};

/** Each token's text (empty when the token holds only part of a character). */
export function tokenTexts(tokens: number[]): string[] {
  const core = (tokenizer().default as unknown as { bytePairEncodingCoreProcessor?: ByteSource })
    .bytePairEncodingCoreProcessor;
  if (!core) return tokens.map((t) => decodeGpt2([t]));
  const utf8 = new TextDecoder();
  return [...core.decodeNativeGenerator(tokens)].map((part) =>
    typeof part === 'string' ? utf8.decode() + part : utf8.decode(part, { stream: true }),
  );
}

/** A token's text with spaces, tabs and line breaks made visible; "…" for part of a character. */
export function visiblePiece(text: string): string {
  if (text === '') return '…';
  return text.replace(/ /g, '␣').replace(/\n/g, '↵').replace(/\t/g, '⇥');
}
