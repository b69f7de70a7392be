// GPT-2's double-precision forward (attnscope/reference) on a model whose
// outputs follow by hand, and on random weights against a second route built
// from the reference's multi-head attention; plus the tiny GPT-2 files the
// model tests load (tests/js/support-gpt2.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { AttnScopeError } from 'attnscope';
import {
  gpt2ForwardReference,
  layerNormReference,
  maskFunction,
  matmul,
  selfAttentionReference,
} from 'attnscope/reference';
import { decodeTensor, parseSafetensors } from '../../dist/safetensors.js';
import { assertClose } from './support.mjs';
import { gpt2Shapes, tinyGpt2, toBfloat16, toFloat16 } from './support-gpt2.mjs';

const zeros = (n) => new Float64Array(n);
const filled = (n, f) => Float64Array.from({ length: n }, (_, i) => f(i));

test('gpt2ForwardReference: a one-layer model whose outputs follow by hand', () => {
  const [C, H, V, Tmax] = [4, 2, 3, 4];
  const config = { layers: 1, heads: H, dModel: C, vocabSize: V, contextLength: Tmax };
  const wte = [1, 2, 0, -1, 0, 1, 1, 0, -2, 0, 3, 1];
  const wpe = filled(Tmax * C, (i) => 0.1 * i);
  const u = [0.5, -1, 0, 2]; // the value bias: every head's weights sum to 1, so attention adds u
  const b = [1, -1, 2, 0.5]; // c_fc bias of the first C hidden units; c_fc's weight is 0
  const w = [0, 0.25, 0, -0.5];
  const identity = filled(C * C, (i) => (i % (C + 1) === 0 ? 1 : 0));
  const weights = new Map(
    Object.entries({
      'wte.weight': wte,
      'wpe.weight': wpe,
      'h.0.ln_1.weight': [3, 1, 2, 1],
      'h.0.ln_1.bias': [1, 0, 0, 1],
      'h.0.attn.c_attn.weight': zeros(C * 3 * C),
      'h.0.attn.c_attn.bias': [...zeros(2 * C), ...u],
      'h.0.attn.c_proj.weight': identity,
      'h.0.attn.c_proj.bias': zeros(C),
      'h.0.ln_2.weight': [1, 1, 1, 1],
      'h.0.ln_2.bias': [5, 5, 5, 5],
      'h.0.mlp.c_fc.weight': zeros(C * 4 * C),
      'h.0.mlp.c_fc.bias': [...b, ...zeros(3 * C)],
      'h.0.mlp.c_proj.weight': filled(4 * C * C, (i) => (i % (C + 1) === 0 && i < C * C ? 1 : 0)),
      'h.0.mlp.c_proj.bias': w,
      'ln_f.weight': [1, 1, 1, 1],
      'ln_f.bias': [0, 0, 0, 0],
    }).map(([name, data]) => [
      name,
      { data, shape: gpt2Shapes(config).find(([n]) => n === name)[1] },
    ]),
  );
  const tokens = [2, 0, 2];
  const r = gpt2ForwardReference(weights, config, tokens);

  // GELU's tanh form at 1, -1, 2, 0.5 (computed separately: 0.5x(1 + tanh(√(2/π)(x + 0.044715x³)))).
  const geluOfB = [
    0.8411919906082768, -0.15880800939172324, 1.954597694087775, 0.34571400982514394,
  ];
  const x0 = [];
  const x1 = [];
  const out = [];
  tokens.forEach((id, t) => {
    const e = [0, 1, 2, 3].map((c) => wte[id * C + c] + wpe[t * C + c]);
    x0.push(...e);
    const after = e.map((value, c) => value + u[c] + geluOfB[c] + w[c]);
    x1.push(...after);
    const mean = after.reduce((s, a) => s + a, 0) / C;
    const variance = after.reduce((s, a) => s + (a - mean) ** 2, 0) / C;
    out.push(...after.map((a) => (a - mean) / Math.sqrt(variance + 1e-5)));
  });
  assert.equal(r.hidden.length, 2);
  assertClose(r.hidden[0], x0, { atol: 0, rtol: 1e-15, what: 'embeddings' });
  assertClose(r.hidden[1], out, { atol: 1e-14, rtol: 1e-12, what: 'ln_f output' });
  const uniformCausal = [];
  for (let h = 0; h < H; h++) {
    for (let i = 0; i < 3; i++)
      for (let j = 0; j < 3; j++) uniformCausal.push(j <= i ? 1 / (i + 1) : 0);
  }
  assertClose(r.attentions[0], uniformCausal, { atol: 0, rtol: 1e-15, what: 'attention' });
  const logits = [];
  for (let t = 0; t < 3; t++) {
    for (let id = 0; id < V; id++) {
      logits.push([0, 1, 2, 3].reduce((s, c) => s + out[t * C + c] * wte[id * C + c], 0));
    }
  }
  assertClose(r.logits, logits, { atol: 1e-13, rtol: 1e-12, what: 'logits' });
  // x1 is what ln_f normalised: its rows are far from normalised themselves.
  assert.ok(Math.abs(x1[0] - out[0]) > 0.1);
});

/** The same forward composed from selfAttentionReference with a causal mask (a second route). */
function composedForward(weights, { layers, heads, dModel: C, vocabSize: V }, tokens) {
  const T = tokens.length;
  const get = (name) => weights.get(name).data;
  const cols = (m, from) => filled(C * C, (i) => m[Math.floor(i / C) * 3 * C + from + (i % C)]);
  const ln = (x, name) =>
    layerNormReference(x, T, C, get(`${name}.weight`), get(`${name}.bias`), 1e-5);
  const gelu = (x) => 0.5 * x * (1 + Math.tanh(0.7978845608028654 * (x + 0.044715 * x * x * x)));
  let x = filled(
    T * C,
    (i) => get('wte.weight')[tokens[Math.floor(i / C)] * C + (i % C)] + get('wpe.weight')[i],
  );
  const hidden = [];
  const attentions = [];
  for (let l = 0; l < layers; l++) {
    const p = (name) => get(`h.${l}.${name}`);
    hidden.push(x);
    const w = p('attn.c_attn.weight');
    const bias = p('attn.c_attn.bias');
    const a = selfAttentionReference({
      x: ln(x, `h.${l}.ln_1`),
      B: 1,
      T,
      C,
      wq: cols(w, 0),
      wk: cols(w, C),
      wv: cols(w, 2 * C),
      bq: bias.subarray(0, C),
      bk: bias.subarray(C, 2 * C),
      bv: bias.subarray(2 * C),
      wo: p('attn.c_proj.weight'),
      bo: p('attn.c_proj.bias'),
      heads,
      factor: 1 / Math.sqrt(C / heads),
      mask: maskFunction({ causal: true }, 1, heads, T),
    });
    attentions.push(a.weights);
    x = x.map((v, i) => v + a.output[i]);
    const up = matmul(ln(x, `h.${l}.ln_2`), T, C, p('mlp.c_fc.weight'), 4 * C, p('mlp.c_fc.bias'));
    const down = matmul(up.map(gelu), T, 4 * C, p('mlp.c_proj.weight'), C, p('mlp.c_proj.bias'));
    x = x.map((v, i) => v + down[i]);
  }
  const final = ln(x, 'ln_f');
  hidden.push(final);
  // logits = final · wteᵀ: wte (V, C) transposed into (C, V).
  const wteT = filled(C * V, (i) => get('wte.weight')[(i % V) * C + Math.floor(i / V)]);
  return { logits: matmul(final, T, C, wteT, V), attentions, hidden };
}

test('gpt2ForwardReference: random two-layer weights agree with the composed route', () => {
  for (const [seed, tokens] of [
    [1, [3, 1, 4, 1, 5, 9, 2, 6]],
    [7, [0]],
    [12, Array.from({ length: 16 }, (_, i) => (i * 7) % 11)],
  ]) {
    const { weights, config } = tinyGpt2({ seed, heads: seed === 7 ? 4 : 2 });
    const r = gpt2ForwardReference(weights, config, tokens);
    const e = composedForward(weights, config, tokens);
    assert.equal(r.attentions.length, config.layers);
    assert.equal(r.hidden.length, config.layers + 1);
    const tol = { atol: 1e-12, rtol: 1e-10 };
    assertClose(r.logits, e.logits, { ...tol, what: `seed ${seed} logits` });
    r.attentions.forEach((a, l) =>
      assertClose(a, e.attentions[l], { ...tol, what: `attention ${l}` }),
    );
    r.hidden.forEach((h, l) => assertClose(h, e.hidden[l], { ...tol, what: `hidden ${l}` }));
    // Random weights give patterns that are neither uniform nor one-hot.
    const spread = new Set(r.attentions[0].map((v) => v.toFixed(3)));
    if (tokens.length > 4)
      assert.ok(spread.size > 10, `seed ${seed}: ${spread.size} distinct weights`);
  }
});

test('gpt2ForwardReference: refuses missing tensors, wrong shapes and bad tokens', () => {
  const { weights, config } = tinyGpt2();
  const refuses = (call, pattern) =>
    assert.throws(call, (e) => e instanceof AttnScopeError && pattern.test(e.message));
  const without = new Map(weights);
  without.delete('h.1.mlp.c_fc.bias');
  refuses(
    () => gpt2ForwardReference(without, config, [1]),
    /missing tensor 'h\.1\.mlp\.c_fc\.bias'/,
  );
  const reshaped = new Map(weights).set('ln_f.bias', { data: new Float32Array(8), shape: [2, 4] });
  refuses(
    () => gpt2ForwardReference(reshaped, config, [1]),
    /'ln_f\.bias' has shape \[2,4\], expected \[8\]/,
  );
  refuses(
    () => gpt2ForwardReference(weights, config, [1, 11]),
    /tokens\[1\] = 11 is not in \[0, 11\)/,
  );
  refuses(
    () => gpt2ForwardReference(weights, config, new Array(17).fill(0)),
    /17 tokens, expected 1 to 16/,
  );
  refuses(() => gpt2ForwardReference(weights, config, []), /0 tokens/);
  refuses(
    () => gpt2ForwardReference(weights, { ...config, heads: 3 }, [1]),
    /not a multiple of heads 3/,
  );
});

test('tinyGpt2: a real safetensors file in GPT-2 layout, in every dtype, with or without the prefix', () => {
  for (const dtype of ['F32', 'F16', 'BF16']) {
    for (const prefix of ['', 'transformer.']) {
      const { bytes, weights, config } = tinyGpt2({ dtype, prefix, seed: 3 });
      const { metadata, tensors } = parseSafetensors(bytes);
      assert.deepEqual(metadata, { format: 'pt', n_head: '2' });
      const names = gpt2Shapes(config).map(([n]) => prefix + n);
      const buffers = [0, 1].map((l) => `${prefix}h.${l}.attn.bias`);
      assert.deepEqual(tensors.map((t) => t.name).sort(), [...names, ...buffers].sort());
      for (const t of tensors) {
        assert.equal(t.dtype, dtype);
        const out = new Float32Array(t.shape.reduce((a, b) => a * b, 1));
        decodeTensor(bytes, t, out);
        if (/\.attn\.bias$/.test(t.name)) {
          assert.deepEqual(t.shape, [1, 1, 16, 16]);
          assert.equal(out[1], 0, 'above the diagonal');
          assert.equal(out[16], 1, 'below the diagonal');
          continue;
        }
        const w = weights.get(t.name.slice(prefix.length));
        assert.deepEqual(t.shape, w.shape);
        assert.deepEqual(out, w.data, `${dtype} ${t.name}`);
      }
    }
  }
  // Half precision holds the float32 weights rounded: close, and not all equal.
  const full = tinyGpt2({ seed: 5 }).weights.get('wte.weight').data;
  for (const [dtype, ulp] of [
    ['F16', 2 ** -11],
    ['BF16', 2 ** -8],
  ]) {
    const half = tinyGpt2({ seed: 5, dtype }).weights.get('wte.weight').data;
    assertClose(half, full, { atol: 2 ** -25, rtol: ulp, what: dtype });
    assert.ok(
      half.some((v, i) => v !== full[i]),
      `${dtype} rounded nothing`,
    );
  }
  assert.deepEqual(parseSafetensors(tinyGpt2({ metadata: null }).bytes).metadata, {});
});

test('support: float16 and bfloat16 rounding to nearest, ties to even', () => {
  const f16 = (x) => toFloat16(x).bits;
  assert.equal(f16(1 / 3), 0x3555);
  assert.equal(f16(-2), 0xc000);
  assert.equal(f16(65519), 0x7bff);
  assert.equal(f16(65520), 0x7c00);
  assert.equal(f16(2 ** -25), 0x0000); // halfway between 0 and the smallest subnormal: to even
  assert.equal(f16(3 * 2 ** -25), 0x0002);
  assert.equal(f16(1 + 2 ** -11), 0x3c00); // tie between 0x3c00 and 0x3c01: to even
  assert.equal(f16(1 + 3 * 2 ** -11), 0x3c02);
  assert.equal(f16(2 ** -14 - 2 ** -26), 0x0400); // rounds up into the smallest normal
  assert.equal(toFloat16(2 ** -14 - 2 ** -26).value, 2 ** -14);
  assert.equal(toBfloat16(1 / 3).bits, 0x3eab);
  assert.equal(toBfloat16(1 + 2 ** -8).bits, 0x3f80);
  assert.equal(toBfloat16(1 + 3 * 2 ** -8).bits, 0x3f82);
  assert.equal(toBfloat16(-1.5).value, -1.5);
});
