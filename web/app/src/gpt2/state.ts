// The model the page computes with: the seeded toy (null here), the visitor's GPT-2 or
// the shipped KJV model,
// and the layer shown. Written by the model picker and the model view; run.ts reads
// them. Not part of a link: a link cannot carry the visitor's file.
import { signal } from '@preact/signals';
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
/** The layer whose attention the pipeline's views show (0-based). */
export const gpt2Layer = signal(0);

export function selectLayer(layer: number): void {
  gpt2Layer.value = layer;
}
