// engine.loadModelFromBlob: a GPT-2 read from a Blob (a browser's File, or
// Node's fs.openAsBlob) piece by piece, each piece decoded straight into the
// storage the core allocated for its tensor. Only the header and one piece
// are ever held besides the model itself, so loading a 548 MB file needs
// about 548 MB, not twice that.
import type { AttnModule } from './attnscope.mjs';
import {
  allocateModel,
  modelCall,
  modelHandle,
  weightStorage,
  type RequireMemory,
} from './model.js';
import { readGpt2 } from './model-load.js';
import type { LoadModelFromBlobOptions, Model } from './model-types.js';
import { decodeElements, parseSafetensors, safetensorsHeaderBytes } from './safetensors.js';
import { describe, fail, own } from './tensors.js';

/** Bytes read from the Blob at a time: a multiple of every element size. */
const kPieceBytes = 8 * 1024 * 1024;

async function read(blob: Blob, begin: number, end: number): Promise<Uint8Array> {
  const bytes = new Uint8Array(await blob.slice(begin, end).arrayBuffer());
  // A Blob whose file changed or shrank since it was opened gives fewer bytes.
  if (bytes.length !== end - begin)
    fail(
      'loadModelFromBlob',
      `the file gave ${bytes.length} bytes at [${begin}, ${end}), expected ${end - begin} (did it change while loading?)`,
    );
  return bytes;
}

export async function loadModelFromBlob(
  raw: AttnModule,
  requireMemory: RequireMemory,
  blob: unknown,
  options: LoadModelFromBlobOptions | undefined,
): Promise<Model> {
  const fn = 'loadModelFromBlob';
  if (typeof Blob === 'undefined' || !(blob instanceof Blob))
    fail(fn, `blob must be a Blob (a File, or fs.openAsBlob in Node), got ${describe(blob)}`);
  if (options !== undefined && (typeof options !== 'object' || options === null))
    fail(fn, `options must be an object, got ${describe(options)}`);
  const onProgress = own(options, 'onProgress');
  if (onProgress !== undefined && typeof onProgress !== 'function')
    fail(fn, `onProgress must be a function, got ${describe(onProgress)}`);
  const report = onProgress as LoadModelFromBlobOptions['onProgress'];

  const size = blob.size;
  const first = await read(blob, 0, Math.min(8, size));
  const headerBytes = safetensorsHeaderBytes(first, size);
  const header = parseSafetensors(await read(blob, 0, 8 + headerBytes), size);
  const { config, entries } = readGpt2(fn, header, own(options, 'config'));
  const handle = allocateModel(raw, requireMemory, fn, config, entries.length);
  try {
    // Progress is the position reached in the file: the buffers loadModel
    // skips (attn.bias, masked_bias) count as read once passed.
    let reported = 0;
    const progress = (position: number) => {
      if (position > reported) report?.((reported = position), size);
    };
    progress(8 + headerBytes);
    // In file order, so the Blob is read front to back.
    const inFileOrder = [...entries].sort((a, b) => a[2].begin - b[2].begin);
    for (const [name, , entry] of inFileOrder) {
      const { address, size: count } = weightStorage(raw, fn, handle, name);
      const itemBytes = (entry.end - entry.begin) / count;
      for (let at = entry.begin; at < entry.end; at += kPieceBytes) {
        const piece = await read(blob, at, Math.min(entry.end, at + kPieceBytes));
        // The view is made after the await: any call meanwhile may have grown
        // (and so replaced) the memory buffer; the weights themselves never move.
        const first = (at - entry.begin) / itemBytes;
        const out = new Float32Array(
          raw.HEAPF32.buffer,
          address + 4 * first,
          piece.length / itemBytes,
        );
        decodeElements(piece, entry.dtype, out);
        progress(at + piece.length);
      }
    }
    progress(size);
    modelCall(raw, fn, 'gpt2_finish', handle);
  } catch (e) {
    modelCall(raw, fn, 'gpt2_free', handle);
    throw e;
  }
  return modelHandle(raw, requireMemory, handle, config);
}
