// Randomized fuzzing of the .safetensors reader (web/lib/safetensors.ts) with
// fast-check: valid files with random bytes changed, cut, inserted or
// removed, a random header length, or one header field replaced by a hostile
// JSON value. Each file is either read into tensors that tile the data area
// and decode, or refused with AttnScopeError; nothing else may escape, and no
// call may take long. Runs per property: FUZZ_JS_RUNS (default 300).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';

import { AttnScopeError } from 'attnscope';
import { decodeTensor, parseSafetensors, writeSafetensors } from '../../../dist/safetensors.js';

const runs = Number(process.env.FUZZ_JS_RUNS ?? 300);
const kSlowMs = 500;

/** A valid file of 1..4 small tensors, some of them rewritten as F16/BF16 in the header. */
const validFile = fc
  .array(
    fc.record({
      shape: fc.array(fc.integer({ min: 0, max: 4 }), { maxLength: 3 }),
      half: fc.constantFrom(null, 'F16', 'BF16'),
    }),
    { minLength: 1, maxLength: 4 },
  )
  .map((specs) => {
    const tensors = specs.map(({ shape }, i) => {
      const n = shape.reduce((a, b) => a * b, 1);
      return { name: `h.${i}.w`, shape, data: Float32Array.from({ length: n }, (_, j) => j - 1.5) };
    });
    const bytes = writeSafetensors(tensors, { n_head: '2' });
    // A tensor of n float32s holds 2n halves: declare it as such (still a valid file).
    const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
    const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
    specs.forEach(({ half }, i) => {
      const entry = header[`h.${i}.w`];
      if (half)
        Object.assign(entry, { dtype: half, shape: [entry.shape.reduce((a, b) => a * b, 1) * 2] });
    });
    return withHeader(header, bytes.subarray(8 + length));
  });

function withHeader(header, data, declared) {
  const json = new TextEncoder().encode(
    typeof header === 'string' ? header : JSON.stringify(header),
  );
  const file = new Uint8Array(8 + json.length + data.length);
  new DataView(file.buffer).setBigUint64(0, BigInt(declared ?? json.length), true);
  file.set(json, 8);
  file.set(data, 8 + json.length);
  return file;
}

/** Reads the file; on success every invariant a loader relies on holds and every tensor decodes. */
function readOrRefuse(bytes) {
  const t0 = performance.now();
  let header;
  try {
    header = parseSafetensors(bytes);
  } catch (e) {
    assert.ok(e instanceof AttnScopeError, `not an AttnScopeError: ${e?.stack ?? e}`);
    assert.match(e.message, /^safetensors: .{10,}/);
    return;
  } finally {
    assert.ok(performance.now() - t0 < kSlowMs, 'parseSafetensors took too long');
  }
  const length = Number(new DataView(bytes.buffer, bytes.byteOffset).getBigUint64(0, true));
  let at = 8 + length;
  for (const t of header.tensors) {
    assert.ok(['F32', 'F16', 'BF16'].includes(t.dtype));
    assert.ok(t.shape.every((s) => Number.isSafeInteger(s) && s >= 0));
    assert.equal(t.begin, at, `tensor '${t.name}' does not follow the previous one`);
    const n = t.shape.reduce((a, b) => a * b, 1);
    assert.equal(t.end - t.begin, n * (t.dtype === 'F32' ? 4 : 2));
    decodeTensor(bytes, t, new Float32Array(n));
    at = t.end;
  }
  assert.equal(at, bytes.length, 'bytes after the last tensor');
  for (const value of Object.values(header.metadata)) assert.equal(typeof value, 'string');
}

test('fuzz: valid files read back, including F16/BF16 declarations and unaligned starts', () => {
  fc.assert(
    fc.property(validFile, fc.integer({ min: 0, max: 3 }), (bytes, shift) => {
      const buffer = new Uint8Array(bytes.length + shift);
      buffer.set(bytes, shift);
      const file = buffer.subarray(shift);
      assert.ok(parseSafetensors(file).tensors.length >= 1);
      readOrRefuse(file);
    }),
    { numRuns: runs },
  );
});

const byteEdit = fc.oneof(
  fc.record({ kind: fc.constant('set'), at: fc.nat(), value: fc.integer({ min: 0, max: 255 }) }),
  fc.record({ kind: fc.constant('cut'), at: fc.nat() }),
  fc.record({ kind: fc.constant('insert'), at: fc.nat(), bytes: fc.uint8Array({ maxLength: 8 }) }),
  fc.record({ kind: fc.constant('remove'), at: fc.nat(), count: fc.integer({ min: 1, max: 8 }) }),
  fc.record({
    kind: fc.constant('length'),
    value: fc.oneof(fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }), fc.bigInt({ min: 0n, max: 400n })),
  }),
);

function applyEdit(bytes, edit) {
  const at = bytes.length ? edit.at % bytes.length : 0;
  switch (edit.kind) {
    case 'set': {
      const out = bytes.slice();
      if (out.length) out[at] = edit.value;
      return out;
    }
    case 'cut':
      return bytes.slice(0, at);
    case 'insert':
      return Uint8Array.from([...bytes.subarray(0, at), ...edit.bytes, ...bytes.subarray(at)]);
    case 'remove':
      return Uint8Array.from([...bytes.subarray(0, at), ...bytes.subarray(at + edit.count)]);
    default: {
      const out = bytes.slice();
      if (out.length >= 8) new DataView(out.buffer).setBigUint64(0, edit.value, true);
      return out;
    }
  }
}

test('fuzz: files with bytes changed, cut, inserted or removed are read or refused', () => {
  fc.assert(
    fc.property(validFile, fc.array(byteEdit, { minLength: 1, maxLength: 4 }), (bytes, edits) => {
      readOrRefuse(edits.reduce(applyEdit, bytes));
    }),
    { numRuns: runs },
  );
});

const hostile = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    -1,
    0.5,
    2 ** 53,
    1e308,
    '',
    'F64',
    'I64',
    'toString',
    '__proto__',
    null,
    [],
    {},
    [0],
    [0, 0, 0],
    [2 ** 31, 2 ** 31],
    [-8, 8],
  ),
);

test('fuzz: one header field replaced by a hostile JSON value is read or refused', () => {
  fc.assert(
    fc.property(
      validFile,
      fc.nat(),
      fc.constantFrom('dtype', 'shape', 'data_offsets', 'extra', 'whole', 'metadata', 'name'),
      hostile,
      (bytes, which, field, value) => {
        const length = Number(new DataView(bytes.buffer).getBigUint64(0, true));
        const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
        const names = Object.keys(header).filter((k) => k !== '__metadata__');
        const name = names[which % names.length];
        if (field === 'whole') header[name] = value;
        else if (field === 'metadata') header.__metadata__ = value;
        else if (field === 'name') {
          header[typeof value === 'string' ? value : JSON.stringify(value)] = header[name];
          delete header[name];
        } else header[name][field] = value;
        readOrRefuse(withHeader(header, bytes.subarray(8 + length)));
      },
    ),
    { numRuns: runs },
  );
});

test('fuzz: arbitrary bytes and arbitrary JSON headers are read or refused', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.uint8Array({ maxLength: 64 }),
        fc
          .tuple(fc.oneof(fc.jsonValue(), fc.string()), fc.uint8Array({ maxLength: 32 }))
          .map(([h, data]) =>
            withHeader(typeof h === 'string' ? h : (JSON.stringify(h) ?? ''), data),
          ),
      ),
      readOrRefuse,
    ),
    { numRuns: runs },
  );
});
