// The page's side of the GPT-2 worker: one request at a time per call, answered by id.
import type {
  AnalysisReply,
  ForwardReply,
  ForwardWireReply,
  Gpt2Reply,
  Gpt2Request,
  Interventions,
  LayerInput,
  ModelConfig,
} from './protocol';

export type LoadProgress = { phase: 'reading' | 'loading'; loaded: number; total: number };

let worker: Worker | null = null;
let nextId = 0;
const pending = new Map<
  number,
  {
    resolve: (v: unknown) => void;
    reject: (e: Error) => void;
    progress?: (p: LoadProgress) => void;
  }
>();

function call<T>(request: Gpt2Request, progress?: (p: LoadProgress) => void): Promise<T> {
  if (!worker) {
    worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module' });
    worker.onmessage = (e: MessageEvent<Gpt2Reply>) => {
      const reply = e.data;
      const p = pending.get(reply.id);
      if (!p) return;
      if ('progress' in reply) return p.progress?.(reply.progress);
      pending.delete(reply.id);
      if (reply.ok) p.resolve(reply.value);
      else p.reject(new Error(reply.error));
    };
  }
  const id = ++nextId;
  return new Promise<T>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (v: unknown) => void, reject, progress });
    worker!.postMessage({ id, request });
  });
}

// The last Q, K and V projections received, for the loaded model: they change only with
// the layer, so the worker sends them once per layer instead of with every edit.
let projections: { layer: number; weights: Omit<LayerInput, 'x'> } | null = null;
// The last attentions received, by their tokens: they change only with the tokens, so a
// change of layer does not bring them again (the page only reads them, never transfers).
let attentions: { key: string; data: Float32Array[] } | null = null;

/** Starts the worker and its engine (for a model whose file is still being fetched). */
export const startGpt2 = () => call<null>({ kind: 'start' });
export const loadGpt2 = (file: File, progress: (p: LoadProgress) => void) => {
  projections = null;
  attentions = null;
  return call<ModelConfig>({ kind: 'load', file }, progress);
};
export async function forwardGpt2(tokens: number[], layer: number): Promise<ForwardReply> {
  const ask = (weightsHeld: number, attentionsHeld: string | null) =>
    call<ForwardWireReply>({ kind: 'forward', tokens, layer, weightsHeld, attentionsHeld });
  let reply = await ask(projections?.layer ?? -1, attentions?.key ?? null);
  // Another layer's projections, or other tokens' attentions, arrived while this request
  // was on its way: ask with none held.
  const lacksWeights = !reply.layer.weights && projections?.layer !== layer;
  const lacksAttentions = !reply.attentions && attentions?.key !== reply.key;
  if (lacksWeights || lacksAttentions) reply = await ask(-1, null);
  const { x, weights } = reply.layer;
  if (weights) projections = { layer, weights };
  if (reply.attentions) attentions = { key: reply.key, data: reply.attentions };
  return { ...reply, attentions: attentions!.data, layer: { x, ...projections!.weights } };
}
export const generateGpt2 = (tokens: number[], temperature: number, topK: number, seed: number) =>
  call<number>({ kind: 'generate', tokens, temperature, topK, seed });
export const analyseGpt2 = (
  tokens: number[],
  interventions: Interventions,
  attribution: boolean,
  lens: boolean,
) => call<AnalysisReply>({ kind: 'analyse', tokens, interventions, attribution, lens });
export const unloadGpt2 = () => {
  projections = null;
  attentions = null;
  return call<null>({ kind: 'unload' });
};
