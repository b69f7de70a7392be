// Bad files and bad arguments of engine.loadModel and the Model: each
// rejected with an AttnScopeError that names the tensor or argument, the
// engine left usable, and wasm memory exactly as it was (a model refused
// half-way through loading is freed).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import { safetensorsFile, tinyGpt2 } from './support-gpt2.mjs';

/** The file with its JSON header changed by `edit` (the data area kept as it is). */
function withHeader(bytes, edit) {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const length = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  edit(header);
  const text = new TextEncoder().encode(JSON.stringify(header));
  const out = new Uint8Array(8 + text.length + bytes.length - 8 - length);
  new DataView(out.buffer).setBigUint64(0, BigInt(text.length), true);
  out.set(text, 8);
  out.set(bytes.subarray(8 + length), 8 + text.length);
  return out;
}

/** The file with one float32 of tensor `name` (F32 file) set to `value`. */
function withValue(bytes, name, value) {
  const view = new DataView(bytes.buffer, bytes.byteOffset);
  const length = Number(view.getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + length)));
  const out = bytes.slice();
  new DataView(out.buffer).setFloat32(8 + length + header[name].data_offsets[0], value, true);
  return out;
}

const tiny = tinyGpt2({ seed: 4 });
const good = tiny.bytes;

/** The tiny model's F32 file without the tensors `drop` says to leave out, plus `extra` entries. */
function fileWithout(drop, extra = []) {
  const entries = [];
  for (const [name, { data, shape }] of tiny.weights) {
    if (!drop(name)) entries.push([name, 'F32', shape, new Uint8Array(data.buffer.slice(0))]);
  }
  return safetensorsFile([...entries, ...extra], { n_head: '2' });
}

function rename(header, from, to) {
  header[to] = header[from];
  delete header[from];
}

/** The bad files, each loaded by `load(bytes, options)`. */
const casesFor = (load) => [
  [
    'a truncated file',
    () => load(good.subarray(0, good.length - 10)),
    /beyond|outside|end of the file|bytes/,
  ],
  ['a header beyond the end', () => load(good.subarray(0, 40)), /header/],
  [
    'a missing tensor',
    () => load(fileWithout((name) => name === 'h.1.mlp.c_proj.bias')),
    /h\.1\.mlp\.c_proj\.bias/,
  ],
  [
    'a missing block (h.0 absent, h.1 present)',
    () => load(fileWithout((name) => name.startsWith('h.0.'))),
    /no tensor h\.0\.ln_1\.weight/,
  ],
  [
    'a wrong shape',
    () => load(withHeader(good, (h) => (h['ln_f.bias'].shape = [2, 4]))),
    /tensor ln_f\.bias has shape \[2, 4\], expected \[8\]/,
  ],
  [
    'a wrong block shape',
    () => load(withHeader(good, (h) => (h['h.0.attn.c_attn.weight'].shape = [24, 8]))),
    /tensor h\.0\.attn\.c_attn\.weight has shape \[24, 8\], expected \[8, 24\]/,
  ],
  [
    'an unknown tensor',
    () => load(withHeader(good, (h) => rename(h, 'h.0.attn.bias', 'h.0.attn.extra'))),
    /tensor h\.0\.attn\.extra is not part of a GPT-2 model/,
  ],
  [
    'an unknown dtype',
    () => load(withHeader(good, (h) => (h['wpe.weight'].dtype = 'I32'))),
    /wpe\.weight/,
  ],
  [
    'a tensor twice, with and without the prefix',
    () =>
      load(fileWithout(() => false, [['transformer.ln_f.bias', 'F32', [8], new Uint8Array(32)]])),
    /tensor transformer\.ln_f\.bias appears twice/,
  ],
  [
    'overlapping offsets',
    () =>
      load(
        withHeader(good, (h) => {
          [h['ln_f.weight'].data_offsets, h['ln_f.bias'].data_offsets] = [
            h['ln_f.bias'].data_offsets,
            h['ln_f.weight'].data_offsets,
          ];
          h['ln_f.bias'].data_offsets = [...h['ln_f.weight'].data_offsets];
        }),
      ),
    /overlap|belong to no tensor/,
  ],
  [
    'a NaN weight (found after allocating)',
    () => load(withValue(good, 'h.1.ln_2.bias', NaN)),
    /^loadModel: tensor h\.1\.ln_2\.bias has a non-finite value at index 0$/,
  ],
  [
    'heads not dividing dModel',
    () => load(good, { config: { heads: 3 } }),
    /heads=3 does not divide dModel=8/,
  ],
  [
    'a config the tensors contradict',
    () => load(good, { config: { layers: 3 } }),
    /config\.layers is 3, but the file's tensors say 2/,
  ],
  [
    'a misspelt config field',
    () => load(good, { config: { head: 2 } }),
    /config has an unknown field 'head'/,
  ],
  [
    'another architecture',
    () => load(good, { config: { architecture: 'llama' } }),
    /config\.architecture is llama, but only 'gpt2' is supported/,
  ],
  [
    'a bad n_head in the metadata',
    () => load(tinyGpt2({ metadata: { n_head: 'two' } }).bytes),
    /n_head is "two"/,
  ],
];

const named = (message) => (e) => {
  assert.equal(e.name, 'AttnScopeError');
  assert.match(e.message, message);
  return true;
};

const cases = [
  ['not a Uint8Array', () => engine.loadModel(new ArrayBuffer(8)), /bytes must be a Uint8Array/],
  ...casesFor((bytes, options) => engine.loadModel(bytes, options)),
];
for (const [what, call, message] of cases) {
  test(`loadModel rejects ${what}, naming it, and leaves memory as it was`, () => {
    const before = engine.memoryUsage().heapInUse;
    assert.throws(call, named(message));
    assert.equal(engine.memoryUsage().heapInUse, before);
  });
}

// The same files read from a Blob, a piece at a time: the same errors, and a
// model refused after its storage was allocated is freed all the same.
/** A message that names loadModel, naming loadModelFromBlob instead. */
const forBlob = (re) => new RegExp(re.source.replace('^loadModel:', '^loadModelFromBlob:'));
const blobCases = [
  ['not a Blob', () => engine.loadModelFromBlob(new Uint8Array(8)), /blob must be a Blob/],
  [
    'an onProgress that is not a function',
    () => engine.loadModelFromBlob(new Blob([good]), { onProgress: 1 }),
    /onProgress must be a function/,
  ],
  ...casesFor((bytes, options) => engine.loadModelFromBlob(new Blob([bytes]).slice(0), options)),
];
for (const [what, call, message] of blobCases) {
  test(`loadModelFromBlob rejects ${what}, naming it, and leaves memory as it was`, async () => {
    const before = engine.memoryUsage().heapInUse;
    await assert.rejects(call, named(forBlob(message)));
    assert.equal(engine.memoryUsage().heapInUse, before);
  });
}

test('a file of 100 MB of header is refused before being read', () => {
  const bytes = new Uint8Array(16);
  new DataView(bytes.buffer).setBigUint64(0, 100_000_000n, true);
  assert.throws(() => engine.loadModel(bytes), { name: 'AttnScopeError' });
});

test('model arguments are checked, naming the argument; the model stays usable', () => {
  const model = engine.loadModel(good);
  const before = engine.memoryUsage().heapInUse;
  const bad = [
    [
      () => model.forward({ tokens: [1, 11] }),
      /tokens\[1\] is 11, expected a token id in \[0, vocabSize=11\)/,
    ],
    [() => model.forward({ tokens: [-1] }), /tokens\[0\]/],
    [() => model.forward({ tokens: [1.5] }), /tokens\[0\]/],
    [() => model.forward({ tokens: [] }), /tokens is empty/],
    [() => model.forward({ tokens: new Array(17).fill(0) }), /17 ids, more than the 16/],
    [() => model.forward({ tokens: new Float32Array(2) }), /tokens must be an Int32Array/],
    [() => model.forward({ tokens: [1], trace: 'yes' }), /trace must be a boolean/],
    [() => model.forward(null), /expects an object/],
    [() => model.generate({ tokens: [1], maxNewTokens: 16 }), /more than contextLength=16/],
    [() => model.generate({ tokens: [1], maxNewTokens: -1 }), /maxNewTokens/],
    [() => model.generate({ tokens: [1], maxNewTokens: 2, temperature: -1 }), /temperature/],
    [() => model.generate({ tokens: [1], maxNewTokens: 2, topK: 0 }), /topK/],
    [() => model.generate({ tokens: [1], maxNewTokens: 2, topP: 1.5 }), /topP/],
    [() => model.generate({ tokens: [1], maxNewTokens: 2, seed: 1.5 }), /seed/],
    [() => model.generate({ tokens: [1], maxNewTokens: 2, onToken: 3 }), /onToken/],
  ];
  for (const [call, message] of bad) {
    assert.throws(call, (e) => {
      assert.equal(e.name, 'AttnScopeError');
      assert.match(e.message, message);
      return true;
    });
  }
  // An exception thrown by onToken ends generation and frees its cache.
  assert.throws(
    () =>
      model.generate({
        tokens: [1],
        maxNewTokens: 3,
        onToken: () => {
          throw new Error('stop here');
        },
      }),
    /stop here/,
  );
  assert.equal(engine.memoryUsage().heapInUse, before);
  assert.equal(model.forward({ tokens: [1, 2] }).logits.shape[0], 2);
  model.dispose();
});
