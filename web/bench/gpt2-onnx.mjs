// GPT-2 as an ONNX graph, run by onnxruntime-web (wasm backend, one thread):
// the network of the package's model written with standard ONNX ops, the way
// an exported GPT-2 looks before onnxruntime's optimiser fuses it (LayerNorm,
// the tanh GELU and the attention pattern are all fused at level "all").
//
// One graph serves the forward pass and generation: it takes the new tokens,
// their positions, an additive mask (new tokens × all tokens) and every
// layer's cached keys and values, and returns the logits with the updated
// caches, as exported decoder models with past_key_values do. A forward pass
// is the same graph with empty caches.
import { encodeModel } from './onnx-model.mjs';

/**
 * @param {Map<string, { data: Float32Array, shape: number[] }>} weights GPT-2's tensors by
 *   Hugging Face name (no prefix)
 * @param {{ layers: number, heads: number, dModel: number, vocabSize: number }} config
 */
export function gpt2OnnxModel(weights, { layers, heads: H, dModel: C, vocabSize: V }) {
  const d = C / H;
  const nodes = [];
  const op = (type, inputs, outputs, attrs) => nodes.push({ op: type, inputs, outputs, attrs });
  const initializers = [
    ['split_qkv', [3], BigInt64Array.of(BigInt(C), BigInt(C), BigInt(C))],
    ['heads_shape', [4], BigInt64Array.of(0n, 0n, BigInt(H), BigInt(d))],
    ['model_shape', [3], BigInt64Array.of(0n, 0n, BigInt(C))],
    ['scale', [], Float32Array.of(1 / Math.sqrt(d))],
    ['half', [], Float32Array.of(0.5)],
    ['one', [], Float32Array.of(1)],
    ['three', [], Float32Array.of(3)],
    ['gelu_cubic', [], Float32Array.of(0.044715)],
    ['gelu_scale', [], Float32Array.of(Math.sqrt(2 / Math.PI))],
  ];
  for (const [name, { data, shape }] of weights) initializers.push([name, shape, data]);
  const layerNorm = (x, prefix, out) =>
    op('LayerNormalization', [x, `${prefix}.weight`, `${prefix}.bias`], [out], {
      axis: -1,
      epsilon: { float: 1e-5 },
    });
  const linear = (x, prefix, out) => {
    op('MatMul', [x, `${prefix}.weight`], [`${out}_mm`]);
    op('Add', [`${out}_mm`, `${prefix}.bias`], [out]);
  };

  op('Gather', ['wte.weight', 'input_ids'], ['tok_emb'], { axis: 0 });
  op('Gather', ['wpe.weight', 'position_ids'], ['pos_emb'], { axis: 0 });
  op('Add', ['tok_emb', 'pos_emb'], ['x0']);
  const inputs = [
    ['input_ids', [1, 'new'], 'int64'],
    ['position_ids', [1, 'new'], 'int64'],
    ['attention_bias', [1, 1, 'new', 'total']],
  ];
  const outputs = [['logits', [1, 'new', V]]];
  for (let l = 0; l < layers; l++) {
    const p = `h.${l}`;
    const x = `x${l}`;
    layerNorm(x, `${p}.ln_1`, `${p}_ln1`);
    linear(`${p}_ln1`, `${p}.attn.c_attn`, `${p}_qkv`);
    op('Split', [`${p}_qkv`, 'split_qkv'], [`${p}_q`, `${p}_k`, `${p}_v`], { axis: 2 });
    for (const t of ['q', 'k', 'v']) {
      op('Reshape', [`${p}_${t}`, 'heads_shape'], [`${p}_${t}4`]);
      op('Transpose', [`${p}_${t}4`], [`${p}_${t}h`], { perm: [0, 2, 1, 3] });
    }
    op('Concat', [`past_key_${l}`, `${p}_kh`], [`present_key_${l}`], { axis: 2 });
    op('Concat', [`past_value_${l}`, `${p}_vh`], [`present_value_${l}`], { axis: 2 });
    op('Transpose', [`present_key_${l}`], [`${p}_kt`], { perm: [0, 1, 3, 2] });
    op('MatMul', [`${p}_qh`, `${p}_kt`], [`${p}_scores`]);
    op('Mul', [`${p}_scores`, 'scale'], [`${p}_scaled`]);
    op('Add', [`${p}_scaled`, 'attention_bias'], [`${p}_masked`]);
    op('Softmax', [`${p}_masked`], [`${p}_weights`], { axis: -1 });
    op('MatMul', [`${p}_weights`, `present_value_${l}`], [`${p}_att`]);
    op('Transpose', [`${p}_att`], [`${p}_att_t`], { perm: [0, 2, 1, 3] });
    op('Reshape', [`${p}_att_t`, 'model_shape'], [`${p}_att_c`]);
    linear(`${p}_att_c`, `${p}.attn.c_proj`, `${p}_proj`);
    op('Add', [x, `${p}_proj`], [`${p}_x1`]);
    layerNorm(`${p}_x1`, `${p}.ln_2`, `${p}_ln2`);
    linear(`${p}_ln2`, `${p}.mlp.c_fc`, `${p}_fc`);
    // GPT-2's GELU, tanh form: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))).
    op('Pow', [`${p}_fc`, 'three'], [`${p}_cube`]);
    op('Mul', [`${p}_cube`, 'gelu_cubic'], [`${p}_cube_s`]);
    op('Add', [`${p}_fc`, `${p}_cube_s`], [`${p}_inner`]);
    op('Mul', [`${p}_inner`, 'gelu_scale'], [`${p}_inner_s`]);
    op('Tanh', [`${p}_inner_s`], [`${p}_tanh`]);
    op('Add', [`${p}_tanh`, 'one'], [`${p}_tanh1`]);
    op('Mul', [`${p}_fc`, 'half'], [`${p}_half`]);
    op('Mul', [`${p}_half`, `${p}_tanh1`], [`${p}_gelu`]);
    linear(`${p}_gelu`, `${p}.mlp.c_proj`, `${p}_mlp`);
    op('Add', [`${p}_x1`, `${p}_mlp`], [`x${l + 1}`]);
    inputs.push([`past_key_${l}`, [1, H, 'past', d]], [`past_value_${l}`, [1, H, 'past', d]]);
    outputs.push(
      [`present_key_${l}`, [1, H, 'total', d]],
      [`present_value_${l}`, [1, H, 'total', d]],
    );
  }
  layerNorm(`x${layers}`, 'ln_f', 'final');
  // The logits reuse wte (tied); the transpose is folded once when the session is created.
  op('Transpose', ['wte.weight'], ['wte_t'], { perm: [1, 0] });
  op('MatMul', ['final', 'wte_t'], ['logits']);
  return encodeModel({ nodes, initializers, inputs, outputs, opsets: [['', 17]] });
}

/** Additive mask for `count` new tokens after `past` cached ones: causal, aligned to the end. */
export function cachedCausalBias(past, count) {
  const total = past + count;
  const bias = new Float32Array(count * total);
  for (let i = 0; i < count; i++) bias.fill(-Infinity, i * total + past + i + 1, (i + 1) * total);
  return bias;
}
