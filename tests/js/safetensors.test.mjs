// The .safetensors reader and writer (web/lib/safetensors.ts): round trips,
// exact float16/bfloat16 decoding from known bit patterns, aligned and
// unaligned reads, and every kind of bad file refused with a message naming
// the problem.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import {
  decodeTensor,
  kSafetensorsMaxHeaderBytes,
  parseSafetensors,
  writeSafetensors,
} from '../../dist/safetensors.js';

/** A file from a header (object or raw text), its data area and an optional declared header length. */
function rawFile(header, data = new Uint8Array(0), declaredLength) {
  const json = new TextEncoder().encode(
    typeof header === 'string' ? header : JSON.stringify(header),
  );
  const file = new Uint8Array(8 + json.length + data.length);
  const view = new DataView(file.buffer);
  const length = BigInt(declaredLength ?? json.length);
  view.setBigUint64(0, length, true);
  file.set(json, 8);
  file.set(data, 8 + json.length);
  return file;
}

/** `bytes` copied to start `shift` bytes into a fresh buffer (to test unaligned reads). */
function shifted(bytes, shift) {
  const buffer = new Uint8Array(bytes.length + shift);
  buffer.set(bytes, shift);
  return buffer.subarray(shift);
}

function rejects(bytes, pattern) {
  assert.throws(
    () => parseSafetensors(bytes),
    (e) => e instanceof AttnScopeError && pattern.test(e.message),
  );
}

/** The raw file holding 16-bit patterns as one tensor of `dtype`. */
function halfFile(dtype, patterns) {
  const data = new Uint8Array(new Uint16Array(patterns).buffer);
  return rawFile({ t: { dtype, shape: [patterns.length], data_offsets: [0, data.length] } }, data);
}

function decodeAll(bytes) {
  const { tensors } = parseSafetensors(bytes);
  return tensors.map((t) => {
    const out = new Float32Array(t.shape.reduce((a, b) => a * b, 1));
    decodeTensor(bytes, t, out);
    return out;
  });
}

test('safetensors: written tensors read back bit for bit, in order, with metadata', () => {
  const special = new Float32Array([NaN, -0, Infinity, -Infinity, 1e-45, 3.4028234663852886e38]);
  const tensors = [
    { name: 'wte.weight', shape: [2, 3], data: Float32Array.from([1, 2, 3, 4, 5, 6]) },
    { name: 'scalar', shape: [], data: Float32Array.of(-7.5) },
    { name: 'empty', shape: [0, 3], data: new Float32Array(0) },
    { name: 'special', shape: [6], data: special },
    { name: '__proto__', shape: [1], data: Float32Array.of(9) },
  ];
  const bytes = writeSafetensors(tensors, { format: 'pt', n_head: '2' });
  const header = parseSafetensors(bytes);
  assert.deepEqual(header.metadata, { format: 'pt', n_head: '2' });
  assert.deepEqual(
    header.tensors.map((t) => [t.name, t.dtype, t.shape]),
    tensors.map((t) => [t.name, 'F32', t.shape]),
  );
  const headerLength = Number(new DataView(bytes.buffer).getBigUint64(0, true));
  assert.equal((8 + headerLength) % 8, 0, 'data area 8-byte aligned');
  assert.equal(header.tensors[0].begin, 8 + headerLength, 'the first tensor starts the data area');
  assert.equal(header.tensors.at(-1).end, bytes.length);
  const text = new TextDecoder().decode(bytes.subarray(8, 8 + headerLength));
  assert.match(text, /^\{"__metadata__":\{"format":"pt","n_head":"2"\},"wte\.weight":/);
  assert.match(text, /\} *$/, 'padded with spaces');
  const decoded = decodeAll(bytes);
  tensors.forEach((t, i) => {
    assert.deepEqual(new Uint32Array(decoded[i].buffer), new Uint32Array(t.data.slice().buffer));
  });
  // No metadata: no "__metadata__" key, and an empty map when read.
  const plain = writeSafetensors([tensors[0]]);
  assert.doesNotMatch(new TextDecoder().decode(plain), /__metadata__/);
  assert.deepEqual(parseSafetensors(plain).metadata, {});
  assert.deepEqual(parseSafetensors(writeSafetensors([])), { metadata: {}, tensors: [] });
});

test('safetensors: F32 read at every byte alignment, into a view inside a larger buffer', () => {
  const data = Float32Array.from({ length: 37 }, (_, i) => Math.sin(i) * 1e3);
  const bytes = writeSafetensors([{ name: 'x', shape: [37], data }]);
  for (let shift = 0; shift < 4; shift++) {
    const at = shifted(bytes, shift);
    const [entry] = parseSafetensors(at).tensors;
    const memory = new Float32Array(50);
    const out = memory.subarray(5, 42);
    decodeTensor(at, entry, out);
    assert.deepEqual(out, data, `shift ${shift}`);
    assert.equal(memory[4], 0);
    assert.equal(memory[42], 0);
  }
});

test('safetensors: float16 decodes exactly (normals, subnormals, zeros, infinities, NaN)', () => {
  const cases = [
    [0x3c00, 1],
    [0xc000, -2],
    [0x3555, 0.333251953125],
    [0x3bff, 0.99951171875],
    [0x7bff, 65504],
    [0x0400, 2 ** -14], // smallest normal
    [0x03ff, 1023 * 2 ** -24], // largest subnormal
    [0x0001, 2 ** -24], // smallest subnormal
    [0x8001, -(2 ** -24)],
    [0x0000, 0],
    [0x8000, -0],
    [0x7c00, Infinity],
    [0xfc00, -Infinity],
  ];
  for (const shift of [0, 1]) {
    const bytes = shifted(
      halfFile(
        'F16',
        cases.map(([bits]) => bits),
      ),
      shift,
    );
    const [out] = decodeAll(bytes);
    cases.forEach(([bits, value], i) => {
      assert.ok(Object.is(out[i], value), `0x${bits.toString(16)} -> ${out[i]}, expected ${value}`);
    });
  }
  // NaNs stay NaN with their payload moved into float32's mantissa.
  const [nan] = decodeAll(halfFile('F16', [0x7e00, 0x7c01, 0xfe00]));
  assert.deepEqual([...new Uint32Array(nan.buffer)], [0x7fc00000, 0x7f802000, 0xffc00000]);
});

test('safetensors: every float16 value is decoded in order and symmetric in sign', () => {
  const all = Array.from({ length: 0x7c01 }, (_, h) => h); // +0 .. +Infinity
  const [positive] = decodeAll(halfFile('F16', all));
  const [negative] = decodeAll(
    halfFile(
      'F16',
      all.map((h) => h | 0x8000),
    ),
  );
  for (let h = 1; h < all.length; h++) {
    assert.ok(positive[h] > positive[h - 1], `0x${h.toString(16)} not above its predecessor`);
    assert.ok(Object.is(negative[h], -positive[h]), `0x${(h | 0x8000).toString(16)}`);
  }
  // The spacing doubles at each binade: 2^-24 up to 2^-14, then 2^(e-25).
  assert.equal(positive[0x0401] - positive[0x0400], 2 ** -24);
  assert.equal(positive[0x7bff] - positive[0x7bfe], 32);
});

test('safetensors: bfloat16 decodes exactly as the top half of a float32', () => {
  const cases = [
    [0x3f80, 1],
    [0xc000, -2],
    [0x4049, 3.140625],
    [0x7f7f, 3.3895313892515355e38],
    [0x0080, 2 ** -126],
    [0x0001, 2 ** -133], // subnormal
    [0x8000, -0],
    [0x7f80, Infinity],
    [0xff80, -Infinity],
  ];
  for (const shift of [0, 1]) {
    const [out] = decodeAll(
      shifted(
        halfFile(
          'BF16',
          cases.map(([bits]) => bits),
        ),
        shift,
      ),
    );
    cases.forEach(([bits, value], i) => {
      assert.ok(Object.is(out[i], value), `0x${bits.toString(16)} -> ${out[i]}, expected ${value}`);
    });
  }
  const [nan] = decodeAll(halfFile('BF16', [0x7fc0, 0xffc1]));
  assert.deepEqual([...new Uint32Array(nan.buffer)], [0x7fc00000, 0xffc10000]);
});

const f32 = (shape, begin) => ({
  dtype: 'F32',
  shape,
  data_offsets: [begin, begin + 4 * shape.reduce((a, b) => a * b, 1)],
});

test('safetensors: truncated files and header lengths beyond the file or the limit', () => {
  rejects(new Uint8Array(5), /the file is 5 bytes, shorter than its 8-byte header length/);
  rejects(new Uint8Array(0), /the file is 0 bytes/);
  const good = rawFile({ a: f32([4], 0) }, new Uint8Array(16));
  rejects(
    good.subarray(0, good.length - 1),
    /tensor 'a': data_offsets \[0,16\] go beyond the data area \(15 bytes\)/,
  );
  rejects(good.subarray(0, 20), /beyond the end of the file/);
  rejects(
    rawFile({}, new Uint8Array(0), 1000),
    /header length is 1000 bytes, beyond the end of the file \(2 bytes/,
  );
  const declared = 100 * 1024 * 1024;
  rejects(
    rawFile({}, new Uint8Array(0), declared),
    new RegExp(
      `header length is ${declared} bytes, above the limit of ${kSafetensorsMaxHeaderBytes} bytes`,
    ),
  );
  rejects(rawFile({}, new Uint8Array(0), 2 ** 40), /1099511627776 bytes, above the limit/);
  rejects(rawFile({}, new Uint8Array(0), 2n ** 64n - 1n), /above the limit/);
});

test('safetensors: headers that are not a JSON object', () => {
  rejects(rawFile('{"a": '), /the header is not JSON \(/);
  rejects(rawFile(''), /the header is not JSON/);
  rejects(rawFile('[1, 2]'), /the header must be a JSON object, got an array/);
  rejects(rawFile('null'), /must be a JSON object, got null/);
  rejects(rawFile('"F32"'), /must be a JSON object, got a string/);
  const badUtf8 = rawFile('{"a":1}');
  badUtf8[10] = 0xff;
  rejects(badUtf8, /the header is not valid UTF-8/);
  rejects(new ArrayBuffer(16), /expected the file as a Uint8Array/);
});

test('safetensors: entries with a bad dtype, shape or field', () => {
  const data = new Uint8Array(16);
  const one = (entry) => rawFile({ 'h.0.attn.bias': entry }, data);
  rejects(
    one({ ...f32([4], 0), dtype: 'I64' }),
    /tensor 'h\.0\.attn\.bias' has dtype I64; supported: F32, F16, BF16/,
  );
  rejects(one({ ...f32([4], 0), dtype: 'toString' }), /has dtype toString/);
  rejects(one({ ...f32([4], 0), dtype: 4 }), /dtype must be a string, got a number/);
  for (const shape of [[-1], [1.5], '4', null, [2 ** 53], [NaN], [[4]]]) {
    const entry = { ...f32([4], 0), shape };
    rejects(
      one(entry),
      /tensor 'h\.0\.attn\.bias': shape must be an array of non-negative integers/,
    );
  }
  rejects(one({ ...f32([4], 0), shape: [2 ** 30, 2 ** 30, 2 ** 30] }), /has too many elements/);
  rejects(
    one({ ...f32([4], 0), extra: 1 }),
    /tensor 'h\.0\.attn\.bias' has an unknown field "extra"/,
  );
  rejects(one([1, 2]), /tensor 'h\.0\.attn\.bias' must be an object, got an array/);
  rejects(one('F32'), /must be an object, got a string/);
});

test('safetensors: data_offsets that are malformed, reversed, beyond the end or the wrong size', () => {
  const data = new Uint8Array(16);
  const one = (data_offsets, shape = [4]) =>
    rawFile({ w: { dtype: 'F32', shape, data_offsets } }, data);
  for (const offsets of [undefined, [0], [0, 16, 32], [-4, 16], [0, '16'], [0.5, 16], 'x']) {
    rejects(
      one(offsets),
      /tensor 'w': data_offsets must be \[begin, end\], two non-negative integers/,
    );
  }
  rejects(one([16, 0]), /tensor 'w': data_offsets \[16,0\] end before they begin/);
  rejects(
    one([0, 20], [5]),
    /tensor 'w': data_offsets \[0,20\] go beyond the data area \(16 bytes\)/,
  );
  rejects(
    one([0, 12], [2, 2]),
    /tensor 'w': data_offsets \[0,12\] hold 12 bytes, but shape \[2,2\] of F32 needs 16/,
  );
  rejects(
    rawFile({ w: { dtype: 'F16', shape: [4], data_offsets: [0, 16] } }, data),
    /hold 16 bytes, but shape \[4\] of F16 needs 8/,
  );
});

test('safetensors: tensors must tile the data area: no overlap, gap or trailing bytes', () => {
  rejects(
    rawFile({ a: f32([4], 0), b: f32([4], 8) }, new Uint8Array(24)),
    /tensor 'a' \[0, 16\] and tensor 'b' \[8, 24\] overlap/,
  );
  rejects(
    rawFile({ a: f32([2], 0), b: f32([2], 0) }, new Uint8Array(8)),
    /tensor 'a' \[0, 8\] and tensor 'b' \[0, 8\] overlap/,
  );
  rejects(
    rawFile({ a: f32([2], 0), b: f32([2], 12) }, new Uint8Array(20)),
    /bytes \[8, 12\) of the data area belong to no tensor/,
  );
  rejects(
    rawFile({ a: f32([2], 4) }, new Uint8Array(12)),
    /bytes \[0, 4\) of the data area belong to no tensor/,
  );
  rejects(
    rawFile({ a: f32([2], 0) }, new Uint8Array(9)),
    /1 bytes at the end of the file belong to no tensor/,
  );
  rejects(rawFile({}, new Uint8Array(4)), /4 bytes at the end of the file belong to no tensor/);
  // A duplicate name: JSON.parse keeps the last entry; the first one's bytes are left uncovered.
  rejects(
    rawFile(
      `{"a":${JSON.stringify(f32([2], 0))},"a":${JSON.stringify(f32([2], 8))}}`,
      new Uint8Array(16),
    ),
    /bytes \[0, 8\) of the data area belong to no tensor/,
  );
  // Zero-sized tensors sit between others; the order of the file's bytes is kept, not the header's.
  const ok = parseSafetensors(
    rawFile({ b: f32([2], 8), z: f32([0], 8), a: f32([2], 0) }, new Uint8Array(16)),
  );
  assert.deepEqual(
    ok.tensors.map((t) => t.name),
    ['a', 'z', 'b'],
  );
});

test('safetensors: __metadata__ must map strings to strings', () => {
  rejects(
    rawFile({ __metadata__: { n_head: 12 } }),
    /__metadata__ must map strings to strings; "n_head" is a number/,
  );
  rejects(
    rawFile({ __metadata__: ['pt'] }),
    /__metadata__ must be an object mapping strings to strings, got an array/,
  );
  rejects(rawFile({ __metadata__: null }), /got null/);
  assert.deepEqual(parseSafetensors(rawFile({ __metadata__: { format: 'pt' } })).metadata, {
    format: 'pt',
  });
});

test('safetensors: decodeTensor checks its output and the entry against the file', () => {
  const bytes = writeSafetensors([{ name: 'x', shape: [2, 2], data: new Float32Array(4) }]);
  const [entry] = parseSafetensors(bytes).tensors;
  const refuses = (call, pattern) =>
    assert.throws(call, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  refuses(
    () => decodeTensor(bytes, entry, new Float32Array(3)),
    /tensor 'x': out has 3 elements, the tensor has 4/,
  );
  refuses(() => decodeTensor(bytes, entry, new Float64Array(4)), /out must be a Float32Array/);
  refuses(
    () => decodeTensor(bytes.subarray(0, entry.end - 1), entry, new Float32Array(4)),
    /outside the file/,
  );
  refuses(
    () => decodeTensor(bytes, { ...entry, dtype: 'I8' }, new Float32Array(4)),
    /has dtype "I8"/,
  );
  refuses(
    () => decodeTensor(bytes, { ...entry, shape: [3] }, new Float32Array(3)),
    /do not hold shape \[3\]/,
  );
  refuses(() => decodeTensor(bytes, null, new Float32Array(4)), /entry must be an object/);
});

test('safetensors: writeSafetensors refuses what it could not write faithfully', () => {
  const refuses = (tensors, metadata, pattern) =>
    assert.throws(
      () => writeSafetensors(tensors, metadata),
      (e) => e instanceof AttnScopeError && pattern.test(e.message),
    );
  const t = (name, shape, data) => ({ name, shape, data });
  refuses(
    [t('a', [1], Float32Array.of(1)), t('a', [1], Float32Array.of(2))],
    undefined,
    /tensor 'a' is named twice/,
  );
  refuses(
    [t('a', [2], Float32Array.of(1))],
    undefined,
    /tensor 'a': data has 1 elements, shape \[2\] needs 2/,
  );
  refuses([t('a', [1], [1])], undefined, /tensor 'a': data must be a Float32Array/);
  refuses(
    [t('a', [-1], new Float32Array(0))],
    undefined,
    /tensor 'a': shape must be an array of non-negative/,
  );
  refuses(
    [t('__metadata__', [1], Float32Array.of(1))],
    undefined,
    /"__metadata__" cannot name a tensor/,
  );
  refuses([t(3, [1], Float32Array.of(1))], undefined, /tensors\[0\]\.name must be a string/);
  refuses([], { n_head: 2 }, /metadata must map strings to strings; "n_head" is a number/);
  refuses('a', undefined, /tensors must be an array/);
});

test('safetensors: writeSafetensors reads data given as a function once, as it writes it', () => {
  const order = [];
  const a = Float32Array.of(1.5, -2),
    b = Float32Array.of(3);
  const bytes = writeSafetensors([
    { name: 'a', shape: [2], data: () => (order.push('a'), a) },
    { name: 'b', shape: [1], data: () => (order.push('b'), b) },
  ]);
  assert.deepEqual(order, ['a', 'b']);
  const file = parseSafetensors(bytes);
  assert.deepEqual(
    file.tensors.map((entry) => {
      const out = new Float32Array(entry.shape.reduce((x, y) => x * y, 1));
      decodeTensor(bytes, entry, out);
      return [entry.name, [...out]];
    }),
    [
      ['a', [1.5, -2]],
      ['b', [3]],
    ],
  );
  const refuses = (data, pattern) =>
    assert.throws(
      () => writeSafetensors([{ name: 'a', shape: [2], data }]),
      (e) => e instanceof AttnScopeError && pattern.test(e.message),
    );
  refuses(() => Float32Array.of(1), /tensor 'a': data has 1 elements, shape \[2\] needs 2/);
  refuses(() => [1, 2], /tensor 'a': data must be a Float32Array/);
});

test('safetensors: a very long tensor name is shortened in messages', () => {
  const name = 'x'.repeat(5000);
  rejects(
    rawFile({ [name]: { ...f32([1], 0), dtype: 'I8' } }, new Uint8Array(4)),
    /^safetensors: tensor 'x{77}\.\.\.' has dtype I8/,
  );
});
