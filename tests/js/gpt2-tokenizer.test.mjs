// attnscope/tokenizer: GPT-2's exact token ids, round trips of any Unicode
// text, and the pieces of the visitor's own text that the tokens stand for.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';

import { AttnScopeError } from 'attnscope';
import { gpt2Tokenizer } from 'attnscope/tokenizer';

const { encode, decode, pieces } = gpt2Tokenizer;

/** The pieces tile the text: contiguous offsets, texts joined give it back, ids are encode's. */
function assertTiles(text) {
  const p = pieces(text);
  assert.deepEqual(
    p.map((x) => x.id),
    encode(text),
  );
  let at = 0;
  for (const piece of p) {
    assert.equal(piece.start, at, `piece ${piece.id} starts at ${piece.start}, expected ${at}`);
    assert.equal(piece.text, text.slice(piece.start, piece.end));
    at = piece.end;
  }
  assert.equal(at, text.length);
  assert.equal(p.map((x) => x.text).join(''), text);
  return p;
}

test('gpt2Tokenizer: the ids GPT-2 gives known texts', () => {
  assert.deepEqual(encode('Hello world'), [15496, 995]);
  assert.deepEqual(encode('hello world'), [31373, 995]);
  assert.deepEqual(encode(' Hello'), [18435]);
  assert.deepEqual(encode('Hello, world!'), [15496, 11, 995, 0]);
  assert.deepEqual(encode(' the'), [262]);
  assert.deepEqual(encode('.\n'), [13, 198]);
  assert.deepEqual(encode(''), []);
  assert.equal(decode([15496, 995]), 'Hello world');
  assert.equal(decode(Int32Array.of(31373, 11, 262)), 'hello, the');
  assert.equal(decode([gpt2Tokenizer.endOfText]), '<|endoftext|>');
  assert.equal(gpt2Tokenizer.vocabSize, 50257);
  assert.equal(gpt2Tokenizer.endOfText, 50256);
  assert.ok(Object.isFrozen(gpt2Tokenizer));
});

test('gpt2Tokenizer: "<|endoftext|>" typed in a text is text, not the special token', () => {
  const ids = encode('a<|endoftext|>b');
  assert.ok(!ids.includes(50256));
  assert.equal(decode(ids), 'a<|endoftext|>b');
});

test('gpt2Tokenizer: any well-formed Unicode text decodes back to itself', () => {
  for (const text of [
    'Les élèves ont mangé 🍎🍐 au café.',
    '你好，世界！日本語のテキスト。한국어',
    'e\u0301 a\u0308 n\u0303 (combining marks)',
    '👩‍👩‍👧 ZWJ family, 🏳️‍🌈 flag, 👍🏽 skin tone',
    'مرحبا بالعالم — שלום',
    '\ttabs\n\nnewlines\r\n  double  spaces   ',
    '\u0000\u0001 control \uffff \u{10ffff}',
  ]) {
    assert.equal(decode(encode(text)), text, JSON.stringify(text));
    assertTiles(text);
  }
  fc.assert(
    fc.property(
      fc.oneof(
        fc.string({ unit: 'grapheme', maxLength: 40 }),
        fc.string({ unit: 'binary', maxLength: 40 }),
      ),
      (text) => {
        assertTiles(text);
        if (text.isWellFormed()) assert.equal(decode(encode(text)), text);
      },
    ),
    { numRuns: 300 },
  );
  // A lone surrogate cannot be UTF-8: it is encoded (and decoded) as U+FFFD, and still has its piece.
  assert.equal(decode(encode('x\ud800y')), 'x\ufffdy');
  assert.deepEqual(
    assertTiles('x\ud800y').map((p) => p.text),
    ['x', '\ud800', 'y'],
  );
});

test('gpt2Tokenizer: pieces keep leading spaces and give a split character to the token completing it', () => {
  assert.deepEqual(pieces(' Hello world'), [
    { id: 18435, text: ' Hello', start: 0, end: 6 },
    { id: 995, text: ' world', start: 6, end: 12 },
  ]);
  // 🙂 is 4 UTF-8 bytes over two tokens: the first holds only its first bytes.
  const smile = assertTiles('🙂');
  assert.equal(smile.length, 2);
  assert.deepEqual(
    smile.map((p) => [p.text, p.start, p.end]),
    [
      ['', 0, 0],
      ['🙂', 0, 2],
    ],
  );
  assert.equal(decode([smile[0].id]), '\ufffd', 'a token of incomplete bytes decodes to U+FFFD');
  assert.equal(decode(smile.map((p) => p.id)), '🙂');
  // Each CJK character here is split: the pieces show each character once.
  const cjk = assertTiles('你好');
  assert.deepEqual(cjk.map((p) => p.text).filter(Boolean), ['你', '好']);
  assert.ok(cjk.length > 2);
  // Decoding is not streaming: a split character in one call leaves nothing for the next.
  assert.equal(decode([smile[0].id]) + decode([15496]), '\ufffdHello');
});

test('gpt2Tokenizer: bad arguments are refused with AttnScopeError naming them', () => {
  const refuses = (call, pattern) =>
    assert.throws(call, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  refuses(() => encode(42), /encode: text must be a string, got number/);
  refuses(() => pieces(undefined), /pieces: text must be a string, got undefined/);
  refuses(() => decode([15496, 50257]), /ids\[1\] = 50257 is not a token id in \[0, 50257\)/);
  refuses(() => decode([-1]), /ids\[0\] = -1/);
  refuses(() => decode([1.5]), /ids\[0\] = 1\.5/);
  refuses(() => decode(['1']), /ids\[0\] = 1 is not a token id/);
  refuses(() => decode(null), /ids must be an array of token ids/);
  refuses(() => decode(7), /ids must be an array of token ids/);
});
