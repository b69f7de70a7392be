// The visitor's GPT-2, off the main thread: streams the chosen file into its own
// engine with progress (the file is never held whole), and answers forward passes and
// generation steps. Nothing here touches the network.
import { createAttnScope, type AttnScope, type Model } from 'attnscope';
import { analyse } from './analyse';
import type { ForwardWireReply, Gpt2Reply, Gpt2Request } from './protocol';

let engine: Promise<AttnScope> | null = null;
let model: Model | null = null;
// The selected layer's ln_1 gain and shift and its Q, K and V projections (c_attn's
// columns with their bias as one more row), made when the page selects that layer: the
// edits that follow reuse them.
let layerWeights: {
  layer: number;
  gamma: Float32Array;
  beta: Float32Array;
  wq: Float32Array;
  wk: Float32Array;
  wv: Float32Array;
} | null = null;
// The last forward's residual stream entering the selected layer (the only entry asked
// for: the others would be fresh copies on every edit), for the next request on the same
// tokens and layer. Its attentions went to the page, which keeps them (client.ts).
let lastForward: {
  key: string;
  layer: number;
  hidden: Float32Array;
  lastLogits: Float32Array;
} | null = null;

const post = (reply: Gpt2Reply, transfer: Transferable[] = []) =>
  self.postMessage(reply, { transfer });

/** The buffers of every typed array in `value` (the engine's results own theirs), once each. */
function buffersIn(value: unknown, found = new Set<ArrayBuffer>()): Set<ArrayBuffer> {
  if (ArrayBuffer.isView(value)) found.add(value.buffer as ArrayBuffer);
  else if (value && typeof value === 'object') {
    for (const inner of Object.values(value)) buffersIn(inner, found);
  }
  return found;
}

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
    const w = weight('attn.c_attn.weight');
    const b = weight('attn.c_attn.bias');
    const C = model!.config.dModel;
    layerWeights = {
      layer: l,
      gamma: weight('ln_1.weight'),
      beta: weight('ln_1.bias'),
      wq: projection(w, b, 0, C),
      wk: projection(w, b, C, C),
      wv: projection(w, b, 2 * C, C),
    };
  }
  return layerWeights;
}

/** Columns [from, from + C) of c_attn (C, 3C) with their bias as one more row: (C + 1, C). */
function projection(w: Float32Array, b: Float32Array, from: number, C: number): Float32Array {
  const out = new Float32Array((C + 1) * C);
  for (let r = 0; r < C; r++) out.set(w.subarray(r * 3 * C + from, r * 3 * C + from + C), r * C);
  out.set(b.subarray(from, from + C), C * C);
  return out;
}

async function forward(
  tokens: number[],
  layer: number,
  weightsHeld: number,
  attentionsHeld: string | null,
): Promise<ForwardWireReply> {
  if (!model) throw new Error('no model is loaded');
  const e = await engine!;
  const start = performance.now();
  const key = tokens.join(',');
  let forwardMillis = 0;
  let attentions: Float32Array[] | null = null;
  // The page lacks these tokens' attentions (a request that crossed the reply carrying
  // them): the forward runs again, all its rows kept by reusePrefix.
  if (lastForward?.key === key && attentionsHeld !== key) lastForward = null;
  // Another layer on the same tokens runs again too (its last token only, by reusePrefix).
  if (lastForward?.key !== key || lastForward.layer !== layer) {
    // Only the tokens from the first edited one on run again (the earlier rows cannot
    // change), and the LM head on the last row alone: the page reads no other.
    const f = model.forward({
      tokens,
      trace: true,
      reusePrefix: true,
      logits: 'last',
      hidden: [layer],
    });
    lastForward = { key, layer, hidden: f.hidden![layer]!.data, lastLogits: f.logits.data };
    attentions = f.attentions!.map((t) => t.data);
    forwardMillis = performance.now() - start;
  }
  const C = model.config.dModel;
  const T = tokens.length;
  const { gamma, beta, wq, wk, wv } = weightsOf(layer);
  const normed = e.layerNorm({
    x: lastForward.hidden,
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
  // The page keeps the projections it was sent (client.ts); copies, as the reply
  // transfers its buffers and the next layer change here reuses these.
  const weights = weightsHeld === layer ? null : { wq: wq.slice(), wk: wk.slice(), wv: wv.slice() };
  // The selected layer's attention again, every intermediate kept, on its own input and
  // c_attn columns, here: this engine's kernels are warm from the forward, and the
  // weights need not cross to another worker and back.
  const layerStart = performance.now();
  const attention = e.selfAttention({
    x,
    wq,
    wk,
    wv,
    shape: [1, T, C + 1],
    heads: model.config.heads,
    scale: true,
    mask: 'causal',
    trace: true,
  });
  return {
    key,
    attentions,
    lastLogits: lastForward.lastLogits.slice(),
    layer: { x, weights },
    attention,
    engine: `${e.simdArch}, ${e.threads} thread${e.threads === 1 ? '' : 's'}, ${e.matmulTileRows}-row tiles`,
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
      const { tokens, layer, weightsHeld, attentionsHeld } = request;
      const value = await forward(tokens, layer, weightsHeld, attentionsHeld);
      const { x, weights } = value.layer;
      post({ id, ok: true, value }, [
        ...(value.attentions ?? []).map((a) => a.buffer),
        value.lastLogits.buffer,
        x.buffer,
        ...(weights ? [weights.wq.buffer, weights.wk.buffer, weights.wv.buffer] : []),
        // The traced layer's intermediates: moved, not copied, to the page.
        ...buffersIn(value.attention),
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
