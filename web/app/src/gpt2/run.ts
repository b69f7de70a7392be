// One run of the page with the visitor's GPT-2: its tokens, its forward pass (every
// layer's attention and the next token's logits), then the selected layer's attention
// again through the engine's traced selfAttention on that layer's own input and weights,
// both in the GPT-2 worker, so that every existing view (Q, K, V, scores, softmax,
// weights·V) shows the model's real numbers and the verified panel checks them.
import type { Progress, RunResult } from '../compute';
import type { Model } from '../model';
import { forwardGpt2 } from './client';
import type { LoadedGpt2 } from './state';
import { encodeGpt2, gpt2Pieces, visiblePiece } from './tokens';

export interface Gpt2Run {
  fileName: string;
  layer: number;
  layers: number;
  tokens: number[];
  texts: string[]; // each token's own text
  cut: number; // tokens left out beyond the model's context
  attentions: Float32Array[]; // per layer (H, T, T), from the forward pass
  lastLogits: Float32Array;
  forwardMillis: number;
}

/** The tokens the model reads from the text (at most its context). */
export function gpt2Tokens(g: LoadedGpt2, text: string): { tokens: number[]; cut: number } {
  const all = encodeGpt2(text);
  const n = Math.min(all.length, g.config.contextLength);
  return { tokens: all.slice(0, n), cut: all.length - n };
}

export async function runGpt2(
  g: LoadedGpt2,
  text: string,
  layer: number,
  progress: Progress,
): Promise<RunResult> {
  const all = gpt2Pieces(text);
  const n = Math.min(all.ids.length, g.config.contextLength);
  const tokens = all.ids.slice(0, n);
  const texts = all.texts.slice(0, n);
  const cut = all.ids.length - n;
  if (tokens.length === 0)
    throw new Error('the text has no tokens: type something for the model to read');
  const { heads: H, dModel: C } = g.config;
  const l = Math.min(layer, g.config.layers - 1);
  progress(
    0,
    1,
    `GPT-2 forward pass over ${tokens.length} tokens, then layer ${l + 1}’s attention, every intermediate`,
  );
  const asked = performance.now();
  const f = await forwardGpt2(tokens, l);
  // For web/bench/site-gpt2-edit.mjs: the call as the page sees it, the worker's own times beside.
  performance.measure('attnscope:gpt2:forward', {
    start: asked,
    detail: {
      worker: f.millis,
      modelForward: f.forwardMillis,
      layer: f.layerMillis,
      engine: f.engine,
    },
  });
  const T = tokens.length;
  const d = C / H;
  const none = { rows: 0, cols: 0, data: new Float32Array(0) };
  const model: Model = {
    B: 1,
    T,
    C: C + 1, // the last column of X is a constant 1 carrying c_attn's biases
    H,
    dK: d,
    dV: d,
    hidden: 0,
    activation: 'gelu',
    tokens: [texts.map(visiblePiece)],
    lengths: [T],
    embeddings: f.layer.x,
    weights: {
      wq: { rows: C + 1, cols: C, data: f.layer.wq },
      wk: { rows: C + 1, cols: C, data: f.layer.wk },
      wv: { rows: C + 1, cols: C, data: f.layer.wv },
      wo: none,
      w1: none,
      w2: none,
    },
    scale: true,
    scaleFactor: 1 / Math.sqrt(d),
    maskSpec: 'causal',
  };
  return {
    model,
    positional: null,
    x: { data: f.layer.x, shape: [1, T, C + 1] },
    attention: f.attention,
    block: null,
    millis: f.millis,
    startupMillis: 0, // the GPT-2 worker's engine started with the model's loading
    gpt2: {
      fileName: g.fileName,
      layer: l,
      layers: g.config.layers,
      tokens,
      texts,
      cut,
      attentions: f.attentions,
      lastLogits: f.lastLogits,
      forwardMillis: f.millis,
    },
  };
}

/** The model's own width d_model: a loaded model's X has one more column, the constant 1 for c_attn's biases. */
export function modelWidth(r: RunResult): number {
  return r.gpt2 ? r.model.C - 1 : r.model.C;
}

/** The status line of a GPT-2 run. */
export function gpt2Status(r: RunResult, startup: string): string {
  const g = r.gpt2!;
  const m = r.model;
  const cut =
    g.cut > 0 ? ` The last ${g.cut} tokens are beyond the model’s context and left out.` : '';
  return `Computed by the engine in ${r.millis.toFixed(1)} ms${startup}: ${g.fileName}, ${g.tokens.length} tokens through ${g.layers} layers of ${m.H} heads (d_model=${modelWidth(r)}, d_k=${m.dK}); the views show layer ${g.layer + 1}.${cut}`;
}
