// The visitor's GPT-2, off the main thread: streams the chosen file into its own
// engine with progress (the file is never held whole), and answers forward passes and
// generation steps. Nothing here touches the network.
import { createAttnScope, type AttnScope, type Model } from 'attnscope';
import { analyse } from './analyse';
import type { ForwardReply, Gpt2Reply, Gpt2Request, LayerInput } from './protocol';

let engine: Promise<AttnScope> | null = null;
let model: Model | null = null;
// The selected layer's ln_1 gain and shift, c_attn weight (C, 3C) and bias (3C), read
// from the model when the page selects that layer.
let layerWeights: {
  layer: number;
  gamma: Float32Array;
  beta: Float32Array;
  w: Float32Array;
  b: Float32Array;
} | null = null;
let lastForward: {
  key: string;
  hidden: Float32Array[];
  attentions: Float32Array[];
  lastLogits: Float32Array;
} | null = null;

const post = (reply: Gpt2Reply, transfer: Transferable[] = []) =>
  self.postMessage(reply, { transfer });

async function load(id: number, file: File) {
  const e = await (engine ??= createAttnScope());
  let reported = 0;
  // Throws the engine's message for a bad file, with nothing left allocated.
  const next = await e.loadModelFromBlob(file, {
    onProgress: (loaded, total) => {
      if (loaded - reported > total / 100 || loaded === total) {
        reported = loaded;
        post({ id, progress: { phase: 'reading', loaded, total } });
      }
    },
  });
  model?.dispose();
  model = next;
  layerWeights = null;
  lastForward = null;
  return model.config;
}

function weightsOf(l: number) {
  if (layerWeights?.layer !== l) {
    const weight = (name: string) => model!.weight(`h.${l}.${name}`).data;
    layerWeights = {
      layer: l,
      gamma: weight('ln_1.weight'),
      beta: weight('ln_1.bias'),
      w: weight('attn.c_attn.weight'),
      b: weight('attn.c_attn.bias'),
    };
  }
  return layerWeights;
}

/** Columns [from, from + C) of c_attn with their bias as one more row: (C + 1, C). */
function projection(l: number, from: number, C: number): Float32Array {
  const { w, b } = weightsOf(l);
  const out = new Float32Array((C + 1) * C);
  for (let r = 0; r < C; r++) out.set(w.subarray(r * 3 * C + from, r * 3 * C + from + C), r * C);
  out.set(b.subarray(from, from + C), C * C);
  return out;
}

async function forward(tokens: number[], layer: number): Promise<ForwardReply> {
  if (!model) throw new Error('no model is loaded');
  const e = await engine!;
  const start = performance.now();
  const key = tokens.join(',');
  let forwardMillis = 0;
  if (lastForward?.key !== key) {
    // Only the tokens from the first edited one on run again (the earlier rows cannot
    // change), and the LM head on the last row alone: the page reads no other.
    const f = model.forward({ tokens, trace: true, reusePrefix: true, logits: 'last' });
    lastForward = {
      key,
      hidden: f.hidden!.map((t) => t.data),
      attentions: f.attentions!.map((t) => t.data),
      lastLogits: f.logits.data,
    };
    forwardMillis = performance.now() - start;
  }
  const C = model.config.dModel;
  const T = tokens.length;
  const { gamma, beta } = weightsOf(layer);
  const normed = e.layerNorm({
    x: lastForward.hidden[layer],
    shape: [T, C],
    gamma,
    beta,
    eps: 1e-5,
  }).data;
  const x = new Float32Array(T * (C + 1));
  for (let t = 0; t < T; t++) {
    x.set(normed.subarray(t * C, (t + 1) * C), t * (C + 1));
    x[t * (C + 1) + C] = 1;
  }
  const input: LayerInput = {
    x,
    wq: projection(layer, 0, C),
    wk: projection(layer, C, C),
    wv: projection(layer, 2 * C, C),
  };
  // The selected layer's attention again, every intermediate kept, on its own input and
  // c_attn columns, here: this engine's kernels are warm from the forward, and the
  // weights need not cross to another worker and back.
  const layerStart = performance.now();
  const attention = e.selfAttention({
    ...input,
    shape: [1, T, C + 1],
    heads: model.config.heads,
    scale: true,
    mask: 'causal',
    trace: true,
  });
  return {
    attentions: lastForward.attentions.map((a) => a.slice()),
    lastLogits: lastForward.lastLogits.slice(),
    layer: input,
    attention,
    millis: performance.now() - start,
    forwardMillis,
    layerMillis: performance.now() - layerStart,
  };
}

self.onmessage = async (e: MessageEvent<{ id: number; request: Gpt2Request }>) => {
  const { id, request } = e.data;
  try {
    if (request.kind === 'start') {
      await (engine ??= createAttnScope());
      post({ id, ok: true, value: null });
    } else if (request.kind === 'load') post({ id, ok: true, value: await load(id, request.file) });
    else if (request.kind === 'forward') {
      const value = await forward(request.tokens, request.layer);
      const { x, wq, wk, wv } = value.layer;
      post({ id, ok: true, value }, [
        ...value.attentions.map((a) => a.buffer),
        value.lastLogits.buffer,
        x.buffer,
        wq.buffer,
        wk.buffer,
        wv.buffer,
      ]);
    } else if (request.kind === 'analyse') {
      if (!model) throw new Error('no model is loaded');
      const { tokens, interventions, attribution, lens } = request;
      const value = analyse(model, tokens, interventions, attribution, lens);
      const a = value.attribution;
      post({ id, ok: true, value }, [
        value.lastLogits.buffer,
        ...(value.diffAttentions ?? []).map((d) => d.buffer),
        ...(a ? [...a.attentions, ...a.rollout, ...a.valueNorms].map((d) => d.buffer) : []),
        ...(value.lens ? [value.lens.ids.buffer, value.lens.probabilities.buffer] : []),
      ]);
    } else if (request.kind === 'generate') {
      if (!model) throw new Error('no model is loaded');
      const { tokens, temperature, topK, seed } = request;
      const r = model.generate({
        tokens,
        maxNewTokens: 1,
        temperature,
        topK: topK || undefined,
        seed,
      });
      post({ id, ok: true, value: r.tokens[0] });
    } else {
      model?.dispose();
      model = null;
      layerWeights = null;
      lastForward = null;
      post({ id, ok: true, value: null });
    }
  } catch (err) {
    post({ id, ok: false, error: err instanceof Error ? err.message : String(err) });
  }
};
