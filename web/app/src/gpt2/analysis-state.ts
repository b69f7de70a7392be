// The visitor's interventions on the loaded GPT-2 and the analysis the worker computes
// for them (analyse.ts): rerun whenever the text's tokens or the interventions change,
// the latest request winning. Written by the interventions panel; read by it, the
// attribution panel and the logit lens.
import { effect, signal } from '@preact/signals';
import { run } from '../store';
import { analyseGpt2 } from './client';
import type { AnalysisReply, Interventions } from './protocol';

export type AttributionMode = 'raw' | 'rollout' | 'valueNorms';

export const interventions = signal<Interventions>({ ablate: [], maskTokens: [], replace: [] });
export const attributionMode = signal<AttributionMode>('raw');
/** The reply for `tokens`, with the interventions it was computed with. */
export const analysis = signal<{
  tokens: number[];
  applied: Interventions;
  reply: AnalysisReply;
  count: number;
} | null>(null);
export const analysisError = signal<string | null>(null);

export function setInterventions(change: (current: Interventions) => Interventions): void {
  interventions.value = change(interventions.value);
}

/** Entries that still fit the model and the text (a shorter text drops masked positions). */
function fitting(iv: Interventions, T: number, layers: number, heads: number): Interventions {
  const ok = (h: { layer: number; head: number }) => h.layer < layers && h.head < heads;
  return {
    ablate: iv.ablate.filter(ok),
    maskTokens: iv.maskTokens.filter((p) => p < T),
    replace: iv.replace.filter((r) => ok(r) && ok(r.from)),
  };
}

let asked = 0;

/** Starts following the run and the interventions (once, from main.tsx). */
export function followAnalysis(): void {
  effect(() => {
    const g = run.value?.result.gpt2;
    const iv = interventions.value;
    if (!g) {
      analysis.value = null;
      return;
    }
    const { H } = run.value!.result.model;
    const applied = fitting(iv, g.tokens.length, g.layers, H);
    const n = ++asked;
    analyseGpt2(g.tokens, applied).then(
      (reply) => {
        if (n !== asked) return;
        analysisError.value = null;
        analysis.value = { tokens: g.tokens, applied, reply, count: n };
      },
      (e: unknown) => {
        if (n === asked) analysisError.value = e instanceof Error ? e.message : String(e);
      },
    );
  });
}
