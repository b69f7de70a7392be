// The .safetensors format (Hugging Face): an 8-byte little-endian header
// length, a JSON header mapping tensor names to { dtype, shape, data_offsets }
// plus an optional "__metadata__" string map, then the tensors' bytes.
// The parser is strict: a file is accepted only if every tensor is one of the
// dtypes the engine computes with, and the tensors tile the data area exactly
// (no gap, no overlap, nothing after the last), as the reference Rust
// implementation requires. Offsets in SafetensorsEntry are absolute byte
// offsets in the file, so a loader can stream each tensor straight from it.
import { AttnScopeError } from './errors.js';

/** The element types read: float32, float16 and bfloat16. */
export type SafetensorsDtype = 'F32' | 'F16' | 'BF16';

/** One tensor of a file: its bytes are file[begin, end). */
export interface SafetensorsEntry {
  /** The tensor's name in the header, e.g. "h.0.attn.c_attn.weight". */
  name: string;
  /** Its element type. */
  dtype: SafetensorsDtype;
  /** Its shape, row-major ([] for a scalar). */
  shape: number[];
  /** Absolute byte offset of the first byte in the file. */
  begin: number;
  /** Absolute byte offset one past the last byte in the file. */
  end: number;
}

/** A file's header as parseSafetensors reads it. */
export interface SafetensorsHeader {
  /** The header's "__metadata__" (empty when absent). */
  metadata: Record<string, string>;
  /** Every tensor, in the order of their bytes in the file. */
  tensors: SafetensorsEntry[];
}

/** A tensor to write: its name, shape and float32 values (row-major). */
export interface SafetensorsTensor {
  /** Its name in the header; unique, and not "__metadata__". */
  name: string;
  /** Its shape ([] for a scalar). */
  shape: number[];
  /**
   * product(shape) values, row-major; or a function giving them, called once
   * while the tensor's bytes are written, so that a caller need not hold
   * every tensor at once.
   */
  data: Float32Array | (() => Float32Array);
}

/** The largest JSON header read (the reference implementation's limit too): 16 MiB. */
export const kSafetensorsMaxHeaderBytes = 16 * 1024 * 1024;

const kItemBytes: Record<SafetensorsDtype, number> = { F32: 4, F16: 2, BF16: 2 };
/** Bytes per element of a supported dtype, else undefined. */
const itemBytesOf = (dtype: unknown): number | undefined =>
  typeof dtype === 'string' && Object.hasOwn(kItemBytes, dtype)
    ? kItemBytes[dtype as SafetensorsDtype]
    : undefined;
const kLittleEndian = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;

function fail(message: string): never {
  throw new AttnScopeError(`safetensors: ${message}`);
}

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const describe = (value: unknown): string => {
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  return `a ${typeof value}`;
};

/** Shortened JSON of a value for a message. */
const show = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
};

/** A tensor as messages name it (a long name shortened). */
const tensorLabel = (name: unknown): string => {
  const text = String(name);
  return `tensor '${text.length > 80 ? `${text.slice(0, 77)}...` : text}'`;
};

/** product(shape), or fails when it is not a safe integer. */
function elementCount(shape: number[], what: string): number {
  let count = 1;
  for (const size of shape) count *= size;
  if (!Number.isSafeInteger(count)) fail(`${what}: shape ${show(shape)} has too many elements`);
  return count;
}

function checkShape(shape: unknown, what: string): number[] {
  if (!Array.isArray(shape) || !shape.every((s) => Number.isSafeInteger(s) && s >= 0)) {
    fail(`${what}: shape must be an array of non-negative integers, got ${show(shape)}`);
  }
  return shape as number[];
}

function checkMetadata(metadata: unknown, where: string): Record<string, string> {
  if (!isPlainObject(metadata)) {
    fail(`${where} must be an object mapping strings to strings, got ${describe(metadata)}`);
  }
  for (const [key, value] of Object.entries(metadata)) {
    if (typeof value !== 'string') {
      fail(`${where} must map strings to strings; "${key}" is ${describe(value)}`);
    }
  }
  return metadata as Record<string, string>;
}

/**
 * The header's length from the file's first 8 bytes, checked against the
 * limit and the file's length; `first` may be the whole file.
 */
export function safetensorsHeaderBytes(first: Uint8Array, fileLength: number): number {
  if (fileLength < 8) {
    fail(`the file is ${fileLength} bytes, shorter than its 8-byte header length`);
  }
  const view = new DataView(first.buffer, first.byteOffset, 8);
  const headerBytes = view.getUint32(4, true) * 2 ** 32 + view.getUint32(0, true);
  if (headerBytes > kSafetensorsMaxHeaderBytes) {
    fail(
      `the header length is ${headerBytes} bytes, above the limit of ${kSafetensorsMaxHeaderBytes} bytes (16 MiB)`,
    );
  }
  if (8 + headerBytes > fileLength) {
    fail(
      `the header length is ${headerBytes} bytes, beyond the end of the file (${fileLength - 8} bytes after the length)`,
    );
  }
  return headerBytes;
}

/**
 * Reads and checks the JSON header; the tensors' bytes are not read. `bytes`
 * is the file, or, with `fileLength`, its beginning up to the end of the
 * header (a loader that streams the tensors reads no more before this).
 */
export function parseSafetensors(
  bytes: Uint8Array,
  fileLength: number = bytes?.length,
): SafetensorsHeader {
  if (!(bytes instanceof Uint8Array))
    fail(`expected the file as a Uint8Array, got ${describe(bytes)}`);
  const headerBytes = safetensorsHeaderBytes(bytes, fileLength);
  if (8 + headerBytes > bytes.length) {
    fail(
      `only ${bytes.length} bytes of the file were given, the header ends at ${8 + headerBytes}`,
    );
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(8, 8 + headerBytes));
  } catch {
    fail('the header is not valid UTF-8');
  }
  let header: unknown;
  try {
    header = JSON.parse(text);
  } catch (error) {
    fail(`the header is not JSON (${(error as Error).message})`);
  }
  if (!isPlainObject(header)) fail(`the header must be a JSON object, got ${describe(header)}`);

  const dataBegin = 8 + headerBytes;
  const dataBytes = fileLength - dataBegin;
  let metadata: Record<string, string> = {};
  const tensors: SafetensorsEntry[] = [];
  // JSON.parse keeps the last of duplicate names; an earlier duplicate's bytes
  // are then covered by no tensor, which the tiling check below rejects.
  for (const [name, value] of Object.entries(header)) {
    if (name === '__metadata__') {
      metadata = checkMetadata(value, '__metadata__');
      continue;
    }
    const what = tensorLabel(name);
    if (!isPlainObject(value)) fail(`${what} must be an object, got ${describe(value)}`);
    for (const key of Object.keys(value)) {
      if (key !== 'dtype' && key !== 'shape' && key !== 'data_offsets') {
        fail(`${what} has an unknown field "${key}"`);
      }
    }
    const { dtype, data_offsets: offsets } = value;
    if (typeof dtype !== 'string') fail(`${what}: dtype must be a string, got ${describe(dtype)}`);
    const itemBytes = itemBytesOf(dtype);
    if (!itemBytes) fail(`${what} has dtype ${dtype}; supported: F32, F16, BF16`);
    const shape = checkShape(value.shape, what);
    if (
      !Array.isArray(offsets) ||
      offsets.length !== 2 ||
      !offsets.every((o) => Number.isSafeInteger(o) && o >= 0)
    ) {
      fail(
        `${what}: data_offsets must be [begin, end], two non-negative integers, got ${show(offsets)}`,
      );
    }
    const [begin, end] = offsets as [number, number];
    if (begin > end) fail(`${what}: data_offsets ${show(offsets)} end before they begin`);
    if (end > dataBytes) {
      fail(`${what}: data_offsets ${show(offsets)} go beyond the data area (${dataBytes} bytes)`);
    }
    const needed = elementCount(shape, what) * itemBytes;
    if (end - begin !== needed) {
      fail(
        `${what}: data_offsets ${show(offsets)} hold ${end - begin} bytes, but shape ${show(shape)} of ${dtype} needs ${needed}`,
      );
    }
    tensors.push({
      name,
      dtype: dtype as SafetensorsDtype,
      shape,
      begin: dataBegin + begin,
      end: dataBegin + end,
    });
  }

  tensors.sort((a, b) => a.begin - b.begin || a.end - b.end);
  let covered = dataBegin;
  let previous: SafetensorsEntry | undefined;
  const relative = (t: SafetensorsEntry) => `[${t.begin - dataBegin}, ${t.end - dataBegin}]`;
  for (const t of tensors) {
    if (t.begin < covered && previous) {
      fail(
        `${tensorLabel(previous.name)} ${relative(previous)} and ${tensorLabel(t.name)} ${relative(t)} overlap`,
      );
    }
    if (t.begin > covered) {
      fail(
        `bytes [${covered - dataBegin}, ${t.begin - dataBegin}) of the data area belong to no tensor`,
      );
    }
    covered = t.end;
    previous = t;
  }
  if (covered !== fileLength) {
    fail(
      `${fileLength - covered} bytes at the end of the file belong to no tensor (the data area is ${dataBytes} bytes)`,
    );
  }
  return { metadata, tensors };
}

/** float16 bits -> float32 bits, every one of the 65536 (NaN payloads kept); built on first use. */
let f16Table: Uint32Array | undefined;
function float16Table(): Uint32Array {
  if (f16Table) return f16Table;
  const table = new Uint32Array(65536);
  const asFloat = new Float32Array(table.buffer);
  for (let h = 0; h < 65536; h++) {
    const sign = (h & 0x8000) << 16;
    const exponent = (h >> 10) & 0x1f;
    const mantissa = h & 0x3ff;
    if (exponent === 0x1f) {
      table[h] = sign | 0x7f800000 | (mantissa << 13);
    } else {
      // Normal: (1024 + m)·2^(e−25); subnormal (e = 0): m·2^−24. Both exact in float32.
      const magnitude =
        exponent === 0 ? mantissa * 2 ** -24 : (1024 + mantissa) * 2 ** (exponent - 25);
      asFloat[h] = magnitude;
      table[h] = (table[h]! | sign) >>> 0;
    }
  }
  return (f16Table = table);
}

/**
 * Decodes one tensor of `bytes` (the whole file) into `out` as float32, which
 * may be a view on wasm memory; out.length must be product(entry.shape).
 * Reads in place through a typed view when the bytes are aligned, else
 * element by element through a DataView: no copy of the tensor is made.
 */
export function decodeTensor(bytes: Uint8Array, entry: SafetensorsEntry, out: Float32Array): void {
  if (!(bytes instanceof Uint8Array)) fail(`decodeTensor: bytes must be a Uint8Array`);
  if (!(out instanceof Float32Array)) fail(`decodeTensor: out must be a Float32Array`);
  if (!isPlainObject(entry)) fail(`decodeTensor: entry must be an object, got ${describe(entry)}`);
  const what = `decodeTensor: ${tensorLabel(entry.name)}`;
  const itemBytes = itemBytesOf(entry.dtype);
  if (!itemBytes) fail(`${what} has dtype ${show(entry.dtype)}; supported: F32, F16, BF16`);
  const count = elementCount(checkShape(entry.shape, what), what);
  const { begin, end } = entry;
  if (
    !Number.isSafeInteger(begin) ||
    !Number.isSafeInteger(end) ||
    begin < 0 ||
    end > bytes.length
  ) {
    fail(`${what}: bytes [${begin}, ${end}) are outside the file (${bytes.length} bytes)`);
  }
  if (end - begin !== count * itemBytes) {
    fail(`${what}: ${end - begin} bytes do not hold shape ${show(entry.shape)} of ${entry.dtype}`);
  }
  if (out.length !== count) {
    fail(`${what}: out has ${out.length} elements, the tensor has ${count}`);
  }
  decodeElements(bytes.subarray(begin, end), entry.dtype, out);
}

/**
 * Decodes `bytes`, whole elements of `dtype`, into `out` (one float32 per
 * element): a tensor, or a run of its elements read in chunks. Reads in place
 * through a typed view when the bytes are aligned, else element by element
 * through a DataView: no copy is made.
 */
export function decodeElements(
  bytes: Uint8Array,
  dtype: SafetensorsDtype,
  out: Float32Array,
): void {
  const itemBytes = kItemBytes[dtype];
  const count = bytes.length / itemBytes;
  if (!Number.isInteger(count) || out.length !== count) {
    fail(`decodeElements: ${bytes.length} bytes of ${dtype} do not fill ${out.length} elements`);
  }
  const at = bytes.byteOffset;
  const aligned = kLittleEndian && at % itemBytes === 0;
  const bits = new Uint32Array(out.buffer, out.byteOffset, count);
  if (dtype === 'F32') {
    if (aligned) {
      out.set(new Float32Array(bytes.buffer, at, count));
    } else {
      const view = new DataView(bytes.buffer, at, count * 4);
      for (let i = 0; i < count; i++) bits[i] = view.getUint32(4 * i, true);
    }
    return;
  }
  // bfloat16 is the top half of a float32; float16 goes through a table of all 65536.
  const table = dtype === 'F16' ? float16Table() : undefined;
  if (aligned) {
    const halves = new Uint16Array(bytes.buffer, at, count);
    if (table) for (let i = 0; i < count; i++) bits[i] = table[halves[i]!]!;
    else for (let i = 0; i < count; i++) bits[i] = halves[i]! << 16;
  } else {
    const view = new DataView(bytes.buffer, at, count * 2);
    if (table) for (let i = 0; i < count; i++) bits[i] = table[view.getUint16(2 * i, true)]!;
    else for (let i = 0; i < count; i++) bits[i] = view.getUint16(2 * i, true) << 16;
  }
}

function checkData(data: unknown, count: number, shape: number[], what: string): Float32Array {
  if (!(data instanceof Float32Array)) fail(`${what}: data must be a Float32Array`);
  if (data.length !== count) {
    fail(`${what}: data has ${data.length} elements, shape ${show(shape)} needs ${count}`);
  }
  return data;
}

/**
 * A .safetensors file of float32 tensors, in the given order, with
 * `metadata` as "__metadata__" when given. The header is padded with spaces
 * so that the data area starts on an 8-byte boundary (as Hugging Face's
 * writer does), which keeps every tensor 4-byte aligned.
 */
export function writeSafetensors(
  tensors: SafetensorsTensor[],
  metadata?: Record<string, string>,
): Uint8Array {
  if (!Array.isArray(tensors))
    fail(`writeSafetensors: tensors must be an array, got ${describe(tensors)}`);
  const fields: string[] = [];
  if (metadata !== undefined) {
    fields.push(
      `"__metadata__":${JSON.stringify(checkMetadata(metadata, 'writeSafetensors: metadata'))}`,
    );
  }
  const names = new Set<string>();
  let offset = 0;
  for (const [i, tensor] of tensors.entries()) {
    const name: unknown = tensor?.name;
    if (typeof name !== 'string') fail(`writeSafetensors: tensors[${i}].name must be a string`);
    if (name === '__metadata__') fail(`writeSafetensors: "__metadata__" cannot name a tensor`);
    if (names.has(name)) fail(`writeSafetensors: ${tensorLabel(name)} is named twice`);
    names.add(name);
    const what = `writeSafetensors: ${tensorLabel(name)}`;
    const shape = checkShape(tensor.shape, what);
    const count = elementCount(shape, what);
    if (typeof tensor.data !== 'function') checkData(tensor.data, count, shape, what);
    // Built by hand so that every name, "__proto__" too, becomes a plain key.
    const entry = { dtype: 'F32', shape, data_offsets: [offset, offset + 4 * count] };
    fields.push(`${JSON.stringify(name)}:${JSON.stringify(entry)}`);
    offset += 4 * count;
  }
  const json = new TextEncoder().encode(`{${fields.join(',')}}`);
  const headerBytes = Math.ceil(json.length / 8) * 8;
  if (headerBytes > kSafetensorsMaxHeaderBytes) {
    fail(
      `writeSafetensors: the header would be ${headerBytes} bytes, above the limit of ${kSafetensorsMaxHeaderBytes}`,
    );
  }
  const file = new Uint8Array(8 + headerBytes + offset);
  const view = new DataView(file.buffer);
  view.setUint32(0, headerBytes, true);
  file.set(json, 8);
  file.fill(0x20, 8 + json.length, 8 + headerBytes);
  let at = 8 + headerBytes;
  for (const tensor of tensors) {
    const data = typeof tensor.data === 'function' ? tensor.data() : tensor.data;
    const what = `writeSafetensors: ${tensorLabel(tensor.name)}`;
    checkData(data, elementCount(tensor.shape, what), tensor.shape, what);
    if (kLittleEndian) new Float32Array(file.buffer, at, data.length).set(data);
    else data.forEach((x, i) => view.setFloat32(at + 4 * i, x, true));
    at += 4 * data.length;
  }
  return file;
}
