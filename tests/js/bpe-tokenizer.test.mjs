// attnscope/bpe-tokenizer: a byte-level BPE built from a rank file (the
// shipped model's tokenizer), its round trips and pieces, and the errors
// for a malformed file.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import fc from 'fast-check';

import { AttnScopeError } from 'attnscope';
import { bpeTokenizer } from 'attnscope/bpe-tokenizer';
import { loadBpeFile } from '../../scripts/model/bpe-file.mjs';

const kFile = new URL('../../models/kjv/tokenizer.json', import.meta.url);
const file = JSON.parse(readFileSync(kFile, 'utf8'));
const tokenizer = bpeTokenizer(file);
const bytes = Array.from({ length: 256 }, (_, b) => (b < 128 ? String.fromCharCode(b) : [b]));

test('bpeTokenizer: the KJV tokenizer encodes as the training scripts do, word pieces first', () => {
  assert.equal(tokenizer.vocabSize, 4096);
  const text =
    'In the beginning God created the heaven and the earth.\nAnd the earth was without form';
  assert.deepEqual(tokenizer.encode(text), loadBpeFile(kFile).encode(text));
  assert.deepEqual(
    tokenizer.pieces('And God said, Let there be light').map((p) => p.text),
    ['And', ' God', ' said', ',', ' Let', ' there', ' be', ' light'],
  );
});

test('bpeTokenizer: any text round-trips and its pieces tile it', () => {
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
      (text) => {
        const ids = tokenizer.encode(text);
        assert.ok(ids.every((id) => Number.isInteger(id) && id >= 0 && id < 4096));
        assert.equal(tokenizer.decode(ids), text);
        const pieces = tokenizer.pieces(text);
        assert.deepEqual(
          pieces.map((p) => p.id),
          ids,
        );
        assert.equal(pieces.map((p) => p.text).join(''), text);
      },
    ),
    { seed: 23, numRuns: 200 },
  );
});

test('bpeTokenizer: a file of single bytes and one merge', () => {
  const small = bpeTokenizer({ pattern: ' ?\\p{L}+|\\s+|.', ranks: [...bytes, 'ab'] });
  assert.equal(small.vocabSize, 257);
  assert.deepEqual(small.encode('abc ab'), [256, 99, 32, 256]);
  assert.equal(small.decode([256, 99]), 'abc');
  // A character split over byte tokens shows on the token that completes it.
  assert.deepEqual(
    small.pieces('é').map((p) => p.text),
    ['', 'é'],
  );
});

test('bpeTokenizer: a malformed file or argument is an AttnScopeError naming it', () => {
  const refused = (fn, pattern) =>
    assert.throws(fn, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  refused(() => bpeTokenizer(null), /bpeTokenizer: file must be an object/);
  refused(
    () => bpeTokenizer({ pattern: '.', ranks: 'abc' }),
    /file\.ranks must be an array of 256/,
  );
  refused(
    () => bpeTokenizer({ pattern: '.', ranks: bytes.slice(1) }),
    /file\.ranks must be an array of 256/,
  );
  refused(
    () => bpeTokenizer({ pattern: '.', ranks: [...bytes.slice(0, 255), 'ab'] }),
    /holds 255 of the 256 single bytes/,
  );
  refused(
    () => bpeTokenizer({ pattern: '.', ranks: [...bytes, [300]] }),
    /file\.ranks\[256\] must be a string or an array of bytes/,
  );
  refused(
    () => bpeTokenizer({ pattern: '.', ranks: [...bytes, ''] }),
    /file\.ranks\[256\] is empty/,
  );
  refused(
    () => bpeTokenizer({ pattern: '(', ranks: bytes }),
    /file\.pattern is not a regular expression/,
  );
  refused(() => bpeTokenizer({ pattern: 3, ranks: bytes }), /file\.pattern must be a string/);
  refused(() => tokenizer.encode(7), /bpeTokenizer\.encode: text must be a string, got number/);
  refused(() => tokenizer.pieces(undefined), /bpeTokenizer\.pieces: text must be a string/);
  refused(
    () => tokenizer.decode([4096]),
    /bpeTokenizer\.decode: ids\[0\] = 4096 is not a token id in \[0, 4096\)/,
  );
  refused(() => tokenizer.decode(5), /bpeTokenizer\.decode: ids must be an array/);
  // The tokenizer still works after refusing.
  assert.equal(tokenizer.decode(tokenizer.encode('Amen.')), 'Amen.');
});
