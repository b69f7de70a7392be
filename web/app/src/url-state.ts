// The full state in the URL fragment: JSON → deflate → base64url. Decoding is
// defensive: size limits before and after decompression, then sanitizeState.
// A short form names only the model, for links that choose one: #model=toy (or kjv, gpt2).
import {
  defaultState,
  kModelChoices,
  sanitizeState,
  type AppState,
  type ModelChoice,
} from './state';
import { computedText } from './tokenize';

const kMaxEncoded = 200_000; // characters in the fragment
const kMaxJson = 2_000_000; // bytes after decompression

function toBase64Url(bytes: Uint8Array): string {
  let bin = '';
  for (let i = 0; i < bytes.length; i += 0x8000)
    bin += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(bin).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): Uint8Array<ArrayBuffer> {
  const b64 = text.replace(/-/g, '+').replace(/_/g, '/');
  const bin = atob(b64 + '='.repeat((4 - (b64.length % 4)) % 4));
  return Uint8Array.from(bin, (c) => c.charCodeAt(0));
}

async function pipeThrough(
  bytes: Uint8Array<ArrayBuffer>,
  stream: CompressionStream | DecompressionStream,
  limit: number,
): Promise<Uint8Array> {
  // A stream of the bytes themselves: a Blob's stream would first register the bytes with
  // the browser process, which showed in a profile of writing links.
  const source = new ReadableStream<BufferSource>({
    start(controller) {
      controller.enqueue(bytes);
      controller.close();
    },
  });
  const reader = source.pipeThrough(stream).getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > limit) {
      await reader.cancel();
      throw new Error('state too large');
    }
    chunks.push(value);
  }
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}

export async function encodeState(state: AppState): Promise<string> {
  const json = new TextEncoder().encode(JSON.stringify(state));
  return toBase64Url(await pipeThrough(json, new CompressionStream('deflate-raw'), kMaxJson * 2));
}

async function encodeIfFits(state: AppState): Promise<string | null> {
  if (new TextEncoder().encode(JSON.stringify(state)).length > kMaxJson) return null;
  const encoded = await encodeState(state);
  return encoded.length <= kMaxEncoded ? encoded : null;
}

export interface Link {
  hash: string | null; // '#s=…', or null when no link can hold the state
  note: string; // '' when the link holds everything, else what it leaves out
}

/**
 * The fragment for the address bar. A link never silently drops text: when the
 * whole text does not fit, it holds the computed part (which gives the same
 * result) and the note says so; the text box itself is never cut.
 */
export async function linkState(state: AppState): Promise<Link> {
  const full = await encodeIfFits(state);
  if (full) return { hash: `#s=${full}`, note: '' };
  const n = (x: number) => x.toLocaleString('en');
  const short = computedText(state.text);
  const save = 'The text box keeps everything; “Export everything (JSON)” saves it all.';
  if (short !== state.text) {
    const cut = await encodeIfFits({ ...state, text: short });
    if (cut)
      return {
        hash: `#s=${cut}`,
        note: `Your text is too long for a link: the link holds only the ${n(short.length)} characters that are computed, of ${n(state.text.length)}. ${save}`,
      };
  }
  return {
    hash: null,
    note: `This state is too large for a link (more than ${n(kMaxEncoded)} characters once compressed), so the address bar does not hold it. ${save}`,
  };
}

/** Returns null when the fragment holds no state; throws a readable error when it is damaged. */
export async function decodeState(hash: string): Promise<AppState | null> {
  return (await decodeLink(hash))?.state ?? null;
}

/** The sanitised state and the raw fields it came from (to say what was clamped). */
export async function decodeLink(
  hash: string,
): Promise<{ state: AppState; raw: Record<string, unknown> } | null> {
  const named = /^#?model=([a-z0-9]+)$/.exec(hash);
  if (named) {
    if (!kModelChoices.includes(named[1] as ModelChoice))
      throw new Error(
        `The link asks for a model this page does not have (“${named[1]}”); it offers ${kModelChoices.join(', ')}.`,
      );
    return { state: defaultState(named[1] as ModelChoice), raw: {} };
  }
  const m = /^#?s=([A-Za-z0-9_-]+)$/.exec(hash);
  if (!m) return null;
  if (m[1].length > kMaxEncoded) throw new Error('The link’s state is too large.');
  let bytes: Uint8Array;
  try {
    bytes = await pipeThrough(
      fromBase64Url(m[1]),
      new DecompressionStream('deflate-raw'),
      kMaxJson,
    );
  } catch {
    throw new Error('The link’s state could not be read (damaged or too large).');
  }
  let raw: unknown;
  try {
    raw = JSON.parse(new TextDecoder().decode(bytes));
  } catch {
    throw new Error('The link’s state is not valid JSON.');
  }
  const fields =
    typeof raw === 'object' && raw !== null && !Array.isArray(raw)
      ? (raw as Record<string, unknown>)
      : {};
  return { state: sanitizeState(raw), raw: fields };
}
