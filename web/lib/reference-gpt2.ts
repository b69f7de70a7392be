// GPT-2's forward pass written plainly in double precision (part of
// attnscope/reference): what the engine's float32 model is checked against,
// layer by layer. Weights are in Hugging Face's layout: the linear layers are
// Conv1D, whose weight is (in, out), so y = x · W + b.
import { AttnScopeError } from './errors.js';
import type { ForwardInterventions } from './model-analysis-types.js';
import { layerNormReference, matmul, type Values } from './reference.js';

/** The sizes of a GPT-2 (the names of ARCHITECTURE.md's model.config). */
export interface Gpt2ReferenceConfig {
  /** Transformer blocks. */
  layers: number;
  /** Attention heads per block (dModel / heads each). */
  heads: number;
  /** Width of the residual stream, C. */
  dModel: number;
  /** Tokens in the vocabulary, V. */
  vocabSize: number;
  /** Positions wpe holds: the longest sequence, Tmax. */
  contextLength: number;
}

/** One parameter: its values, row-major, and its shape. */
export interface Gpt2ReferenceTensor {
  /** The values, row-major. */
  data: ArrayLike<number>;
  /** The shape, as ARCHITECTURE.md's "Models" gives it (e.g. [C, 3C] for c_attn.weight). */
  shape: number[];
}

/** GPT-2's parameters by their names without the "transformer." prefix (wte.weight, h.0.ln_1.bias, ...). */
export type Gpt2ReferenceWeights = Map<string, Gpt2ReferenceTensor>;

/** What gpt2ForwardReference keeps of one forward pass, in doubles. */
export interface Gpt2ReferenceResult {
  /** (T, vocabSize): the last hidden state times wteᵀ. */
  logits: Float64Array;
  /** One per layer, (heads, T, T): the causal softmax weights. */
  attentions: Float64Array[];
  /** layers + 1 entries, each (T, dModel): the residual stream before each block, then the output of ln_f. */
  hidden: Float64Array[];
  /** One per layer, (T, dModel): the values of every head side by side (head h: columns [h·d, (h+1)·d)). */
  values: Float64Array[];
}

/** The interventions of model.forward, which gpt2ForwardReference applies with the same meaning. */
export type Gpt2ReferenceInterventions = ForwardInterventions;

/** Per head of one layer: 'zero', 'mean', a (T, T) pattern, or nothing. */
type HeadEdit = 'zero' | 'mean' | Float64Array | undefined;

const kLayerNormEps = 1e-5;

/** GPT-2's GELU, the tanh approximation: 0.5·x·(1 + tanh(√(2/π)·(x + 0.044715·x³))). */
export const geluTanh = (x: number): number =>
  0.5 * x * (1 + Math.tanh(Math.sqrt(2 / Math.PI) * (x + 0.044715 * x ** 3)));

/** The causal attention of `heads` heads over q, k, v (T, C) each (head h: columns [h·d, (h+1)·d)). */
function causalAttention(
  q: Values,
  k: Values,
  v: Values,
  T: number,
  C: number,
  heads: number,
  masked: ReadonlySet<number>,
  edits: HeadEdit[],
): { output: Float64Array; weights: Float64Array } {
  const d = C / heads;
  const output = new Float64Array(T * C);
  const weights = new Float64Array(heads * T * T);
  for (let h = 0; h < heads; h++) {
    const edit = edits[h];
    for (let i = 0; i < T; i++) {
      const row = weights.subarray((h * T + i) * T, (h * T + i + 1) * T);
      if (edit instanceof Float64Array) {
        row.set(edit.subarray(i * T, (i + 1) * T));
      } else {
        let visible = Array.from({ length: i + 1 }, (_, j) => j).filter((j) => !masked.has(j));
        if (visible.length === 0) visible = [i];
        let max = -Infinity;
        for (const j of visible) {
          let s = 0;
          for (let c = h * d; c < (h + 1) * d; c++) s += q[i * C + c]! * k[j * C + c]!;
          row[j] = s / Math.sqrt(d);
          max = Math.max(max, row[j]!);
        }
        let sum = 0;
        for (const j of visible) sum += row[j] = Math.exp(row[j]! - max);
        for (const j of visible) row[j] = row[j]! / sum; // other keys stay 0
      }
      for (let c = h * d; c < (h + 1) * d; c++) {
        let s = 0;
        for (let j = 0; j < T; j++) s += row[j]! * v[j * C + c]!;
        output[i * C + c] = s;
      }
    }
    for (let c = h * d; c < (h + 1) * d; c++) {
      let mean = 0;
      for (let i = 0; i < T; i++) mean += output[i * C + c]! / T;
      for (let i = 0; i < T; i++) {
        if (edit === 'zero') output[i * C + c] = 0;
        if (edit === 'mean') output[i * C + c] = mean;
      }
    }
  }
  return { output, weights };
}

/** Columns [from, from + width) of a (rows, cols) matrix. */
function columns(m: Values, rows: number, cols: number, from: number, width: number): Float64Array {
  const out = new Float64Array(rows * width);
  for (let r = 0; r < rows; r++) {
    for (let c = 0; c < width; c++) out[r * width + c] = m[r * cols + from + c]!;
  }
  return out;
}

/**
 * GPT-2 on one sequence of token ids, in doubles, keeping every layer's
 * attention, values and residual stream; with `interventions` (whose ranges
 * the caller has checked) the run that model.forward reports, patterns of
 * `replace` taken from a clean run made first.
 */
export function gpt2ForwardReference(
  weights: Gpt2ReferenceWeights,
  config: Gpt2ReferenceConfig,
  tokens: ArrayLike<number>,
  interventions?: Gpt2ReferenceInterventions,
): Gpt2ReferenceResult {
  const { layers, heads, dModel: C, vocabSize: V, contextLength } = config;
  if (!(C > 0 && heads > 0 && Number.isInteger(C / heads))) {
    throw new AttnScopeError(
      `gpt2ForwardReference: dModel ${C} is not a multiple of heads ${heads}`,
    );
  }
  const T = tokens.length;
  if (T < 1 || T > contextLength) {
    throw new AttnScopeError(`gpt2ForwardReference: ${T} tokens, expected 1 to ${contextLength}`);
  }
  const param = (name: string, shape: number[]): ArrayLike<number> => {
    const w = weights.get(name);
    if (!w) throw new AttnScopeError(`gpt2ForwardReference: missing tensor '${name}'`);
    if (w.shape.join() !== shape.join() || w.data.length !== shape.reduce((a, b) => a * b, 1)) {
      throw new AttnScopeError(
        `gpt2ForwardReference: tensor '${name}' has shape [${w.shape}], expected [${shape}]`,
      );
    }
    return w.data;
  };

  const wte = param('wte.weight', [V, C]);
  const wpe = param('wpe.weight', [contextLength, C]);
  let x = new Float64Array(T * C);
  for (let t = 0; t < T; t++) {
    const id = tokens[t]!;
    if (!(Number.isInteger(id) && id >= 0 && id < V)) {
      throw new AttnScopeError(`gpt2ForwardReference: tokens[${t}] = ${id} is not in [0, ${V})`);
    }
    for (let c = 0; c < C; c++) x[t * C + c] = wte[id * C + c]! + wpe[t * C + c]!;
  }

  const clean = interventions?.replace?.length
    ? gpt2ForwardReference(weights, config, tokens)
    : undefined;
  const edits: HeadEdit[][] = Array.from({ length: layers }, () => new Array<HeadEdit>(heads));
  for (const { layer, head, mode } of interventions?.ablate ?? []) {
    edits[layer]![head] = mode ?? 'zero';
  }
  for (const { layer, head, from } of interventions?.replace ?? []) {
    const source = clean!.attentions[from.layer]!;
    edits[layer]![head] = source.slice(from.head * T * T, (from.head + 1) * T * T);
  }
  const masked = new Set(interventions?.maskTokens ?? []);
  const hidden: Float64Array[] = [];
  const attentions: Float64Array[] = [];
  const values: Float64Array[] = [];
  const addTo = (residual: Float64Array, delta: Float64Array) =>
    residual.map((value, i) => value + delta[i]!);
  for (let l = 0; l < layers; l++) {
    const p = (name: string, shape: number[]) => param(`h.${l}.${name}`, shape);
    hidden.push(x);
    const a = layerNormReference(
      x,
      T,
      C,
      p('ln_1.weight', [C]),
      p('ln_1.bias', [C]),
      kLayerNormEps,
    );
    const qkv = matmul(
      a,
      T,
      C,
      p('attn.c_attn.weight', [C, 3 * C]),
      3 * C,
      p('attn.c_attn.bias', [3 * C]),
    );
    const [q, k, v] = [0, C, 2 * C].map((from) => columns(qkv, T, 3 * C, from, C)) as [
      Float64Array,
      Float64Array,
      Float64Array,
    ];
    const attention = causalAttention(q, k, v, T, C, heads, masked, edits[l]!);
    attentions.push(attention.weights);
    values.push(v);
    const projected = matmul(
      attention.output,
      T,
      C,
      p('attn.c_proj.weight', [C, C]),
      C,
      p('attn.c_proj.bias', [C]),
    );
    x = addTo(x, projected);

    const m = layerNormReference(
      x,
      T,
      C,
      p('ln_2.weight', [C]),
      p('ln_2.bias', [C]),
      kLayerNormEps,
    );
    const up = matmul(
      m,
      T,
      C,
      p('mlp.c_fc.weight', [C, 4 * C]),
      4 * C,
      p('mlp.c_fc.bias', [4 * C]),
    );
    const down = matmul(
      up.map(geluTanh),
      T,
      4 * C,
      p('mlp.c_proj.weight', [4 * C, C]),
      C,
      p('mlp.c_proj.bias', [C]),
    );
    x = addTo(x, down);
  }
  const final = layerNormReference(
    x,
    T,
    C,
    param('ln_f.weight', [C]),
    param('ln_f.bias', [C]),
    kLayerNormEps,
  );
  hidden.push(final);

  const logits = new Float64Array(T * V);
  for (let t = 0; t < T; t++) {
    for (let id = 0; id < V; id++) {
      let s = 0;
      for (let c = 0; c < C; c++) s += final[t * C + c]! * wte[id * C + c]!;
      logits[t * V + id] = s;
    }
  }
  return { logits, attentions, hidden, values };
}
