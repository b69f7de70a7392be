// The visitor's interventions on the loaded GPT-2 and the analysis the worker computes
// for them (analyse.ts): rerun whenever the text's tokens, the interventions or the open
// panels change, the latest request winning. Nothing is asked of the worker while there
// is no intervention and the attribution and logit lens panels are closed. Written by the
// analysis panels, read by them.
import { effect, signal } from '@preact/signals';
import { run } from '../store';
import { analyseGpt2 } from './client';
import type { AnalysisReply, Interventions } from './protocol';

export type AttributionMode = 'raw' | 'rollout' | 'valueNorms';

export const interventions = signal<Interventions>({ ablate: [], maskTokens: [], replace: [] });
export const attributionMode = signal<AttributionMode>('raw');
export const attributionOpen = signal(false);
export const lensOpen = signal(false);
/** The reply for `tokens`, with the interventions it was computed with. */
export const analysis = signal<{
  tokens: number[];
  applied: Interventions;
  reply: AnalysisReply;
  count: number;
} | null>(null);
export const analysisError = signal<string | null>(null);
/** The number of the last request settled (answered, failed or not needed): for tests. */
export const analysisSettled = signal(0);

export function setInterventions(change: (current: Interventions) => Interventions): void {
  interventions.value = change(interventions.value);
}

export const noInterventions = (iv: Interventions) =>
  iv.ablate.length + iv.maskTokens.length + iv.replace.length === 0;

/** Entries that still fit the model and the text (a shorter text drops masked positions). */
export function fitting(
  iv: Interventions,
  T: number,
  layers: number,
  heads: number,
): Interventions {
  const ok = (h: { layer: number; head: number }) => h.layer < layers && h.head < heads;
  return {
    ablate: iv.ablate.filter(ok),
    maskTokens: iv.maskTokens.filter((p) => p < T),
    replace: iv.replace.filter((r) => ok(r) && ok(r.from)),
  };
}

let asked = 0;

/** Starts following the run, the interventions and the open panels (once). */
export function followAnalysis(): void {
  effect(() => {
    const g = run.value?.result.gpt2;
    const applied = g
      ? fitting(interventions.value, g.tokens.length, g.layers, run.value!.result.model.H)
      : null;
    const attribution = attributionOpen.value;
    const lens = lensOpen.value;
    const n = ++asked;
    if (!g || !applied || (noInterventions(applied) && !attribution && !lens)) {
      analysis.value = null;
      analysisError.value = null;
      analysisSettled.value = n;
      return;
    }
    analyseGpt2(g.tokens, applied, attribution, lens).then(
      (reply) => {
        if (n !== asked) return;
        analysisError.value = null;
        analysis.value = { tokens: g.tokens, applied, reply, count: n };
        analysisSettled.value = n;
      },
      (e: unknown) => {
        if (n !== asked) return;
        analysisError.value = e instanceof Error ? e.message : String(e);
        analysisSettled.value = n;
      },
    );
  });
}
