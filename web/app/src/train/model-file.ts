// A trained model's .safetensors file with its vocabulary in the header's
// __metadata__ (safetensors allows any string values there; the offsets of the
// tensors are relative to the end of the header, so a longer header moves nothing).
import {
  kVocabularyMetadataKey,
  vocabularyFromMetadata,
  vocabularyMetadata,
  type Vocabulary,
} from './vocabulary';

const kMaxHeaderBytes = 16 * 1024 * 1024;

function headerLength(bytes: Uint8Array): number {
  if (bytes.length < 8) throw new Error('the file is too short for a .safetensors header');
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (n > kMaxHeaderBytes || 8 + n > bytes.length)
    throw new Error(`the .safetensors header claims ${n} bytes, more than the file has`);
  return n;
}

/** The saved model with `vocabulary` added to its __metadata__. */
export function withVocabulary(bytes: Uint8Array, vocabulary: Vocabulary): Uint8Array<ArrayBuffer> {
  const n = headerLength(bytes);
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n))) as Record<
    string,
    unknown
  >;
  const { __metadata__: old, ...tensors } = header;
  const metadata = { ...(old as Record<string, string> | undefined) };
  metadata[kVocabularyMetadataKey] = vocabularyMetadata(vocabulary);
  let json = JSON.stringify({ __metadata__: metadata, ...tensors });
  json += ' '.repeat((8 - ((8 + new TextEncoder().encode(json).length) % 8)) % 8); // keeps the data aligned
  const encoded = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + encoded.length + bytes.length - 8 - n);
  new DataView(out.buffer).setBigUint64(0, BigInt(encoded.length), true);
  out.set(encoded, 8);
  out.set(bytes.subarray(8 + n), 8 + encoded.length);
  return out;
}

/** The vocabulary a file carries, or null (a GPT-2 file, or one from elsewhere). */
export async function vocabularyOfFile(file: Blob): Promise<Vocabulary | null> {
  try {
    const start = new Uint8Array(await file.slice(0, 8).arrayBuffer());
    const n = Number(new DataView(start.buffer).getBigUint64(0, true));
    if (n > kMaxHeaderBytes || 8 + n > file.size) return null;
    const header = JSON.parse(await file.slice(8, 8 + n).text()) as { __metadata__?: unknown };
    const metadata = header.__metadata__;
    if (typeof metadata !== 'object' || metadata === null) return null;
    return vocabularyFromMetadata(metadata as Record<string, unknown>);
  } catch {
    return null; // loadModel reports what is wrong with the file itself
  }
}
