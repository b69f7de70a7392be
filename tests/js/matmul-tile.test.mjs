// engine.matmulTileRows and setMatmulTileRows: the register tile's height in
// the products with weight matrices and in attention's fast path (4 or 6
// rows) changes no bit of a result,
// and a height that is not one of them is refused with the engine still usable.
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { engine } from './engine.mjs';
import { rng } from './support.mjs';
import { tinyGpt2 } from './support-gpt2.mjs';

const sameBits = (a, b, what) => {
  assert.equal(a.length, b.length, `${what}: lengths`);
  const x = new Uint32Array(a.buffer, a.byteOffset, a.length);
  const y = new Uint32Array(b.buffer, b.byteOffset, b.length);
  const at = x.findIndex((v, i) => v !== y[i]);
  assert.equal(at, -1, `${what}: element ${at} differs (${a[at]} against ${b[at]})`);
};

function withRows(rows, body) {
  const former = engine.matmulTileRows;
  engine.setMatmulTileRows(rows);
  try {
    assert.equal(engine.matmulTileRows, rows);
    return body();
  } finally {
    engine.setMatmulTileRows(former);
  }
}

test('the tile height is 4 or 6, measured when asked for "auto"', () => {
  assert.ok([4, 6].includes(engine.matmulTileRows));
  const former = engine.matmulTileRows;
  engine.setMatmulTileRows('auto');
  assert.ok([4, 6].includes(engine.matmulTileRows));
  engine.setMatmulTileRows(former);
});

test('a GPT-2 forward and engine.linear give the same bits with 4-row and 6-row tiles', () => {
  const tiny = tinyGpt2({ dModel: 24, heads: 2, vocabSize: 50, contextLength: 32, seed: 5 });
  const model = engine.loadModel(tiny.bytes);
  try {
    // 17 rows: two 6-row tiles, then 4 and 1; 10: one of 6 and one of 4.
    for (const T of [17, 10]) {
      const tokens = Array.from({ length: T }, (_, i) => (i * 7 + 3) % 50);
      const run = () => model.forward({ tokens, trace: true });
      const four = withRows(4, run);
      const six = withRows(6, run);
      sameBits(six.logits.data, four.logits.data, `T ${T} logits`);
      six.hidden.forEach((h, l) => sameBits(h.data, four.hidden[l].data, `T ${T} hidden[${l}]`));
      six.attentions.forEach((a, l) =>
        sameBits(a.data, four.attentions[l].data, `T ${T} attentions[${l}]`),
      );
    }
  } finally {
    model.dispose();
  }
  const random = rng(9);
  const [rows, inDim, outDim] = [13, 40, 72];
  const x = random.floats(rows * inDim);
  const weight = random.floats(inDim * outDim);
  const bias = random.floats(outDim);
  const run = () => engine.linear({ x, shape: [rows, inDim], weight, bias, outDim }).data;
  sameBits(withRows(6, run), withRows(4, run), 'linear');
});

test("engine.attention's fast path gives the same bits with 4-row and 6-row tiles", () => {
  const random = rng(13);
  // d 64 reads the queries in place in 6-row tiles, d 40 from 4-row panels;
  // 129 rows end in a tile of one row, past a 128-key tile.
  for (const [T, d] of [
    [129, 64],
    [129, 40],
    [200, 64],
  ]) {
    const [H, kvHeads] = [4, 2];
    const q = random.floats(H * T * d);
    const k = random.floats(kvHeads * T * d);
    const v = random.floats(kvHeads * T * d);
    for (const mask of ['none', 'causal']) {
      const run = () =>
        engine.attention({
          q,
          k,
          v,
          shape: [1, H, T, d],
          kvShape: [1, kvHeads, T, d],
          mask,
          trace: false,
        }).output.data;
      sameBits(withRows(6, run), withRows(4, run), `T ${T} d ${d} ${mask}`);
    }
  }
});

test('setMatmulTileRows refuses any other height and leaves the engine as it was', () => {
  const former = engine.matmulTileRows;
  for (const bad of [5, 0, '6', null, undefined, 4.5]) {
    assert.throws(
      () => engine.setMatmulTileRows(bad),
      (e) =>
        e.name === 'AttnScopeError' &&
        /^setMatmulTileRows: rows must be 4, 6 or "auto", got /.test(e.message),
      `${String(bad)} is refused`,
    );
    assert.equal(engine.matmulTileRows, former);
  }
});
