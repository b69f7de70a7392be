// The model the page computes with: the seeded toy (null here), the visitor's GPT-2 or
// the shipped KJV model, the one being loaded, and the layer shown. Written by the model
// picker and the views that select a head; run.ts reads them. Not part of a link (which
// names only the model chosen: it cannot carry the visitor's file).
import { batch, computed, signal } from '@preact/signals';
import { selectHead } from '../store';
import type { Vocabulary } from '../train/vocabulary';
import type { ModelConfig } from './protocol';

export interface LoadedGpt2 {
  /** The visitor's own file, or the model attnscope ships (gpt2/kjv.ts). */
  source: 'gpt2' | 'kjv';
  fileName: string;
  fileBytes: number;
  config: ModelConfig;
  /** A model trained on the page reads text with its task's small vocabulary, not GPT-2's BPE. */
  vocabulary?: Vocabulary | null;
}

export const loadedGpt2 = signal<LoadedGpt2 | null>(null);
/** The source whose file is being read and loaded, if any. */
export const loadingGpt2 = signal<LoadedGpt2['source'] | null>(null);
/** The shipped model is on its way and no model is loaded yet. */
export const waitingForKjv = computed(() => loadingGpt2.value === 'kjv' && !loadedGpt2.value);
/** The layer whose attention the pipeline's views show (0-based). */
export const gpt2Layer = signal(0);

export function selectLayer(layer: number): void {
  gpt2Layer.value = layer;
}

/** Shows `head` of `layer` in every view (the model view's maps, head search, named heads). */
export function selectLayerAndHead(layer: number, head: number): void {
  batch(() => {
    if (layer !== gpt2Layer.value) selectLayer(layer);
    selectHead(head);
  });
}
