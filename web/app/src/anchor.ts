// The heatmap cell the reader last tapped or clicked, in viewport coordinates: on a
// narrow screen the inspector opens next to it. Written by the heatmaps' click
// handler only; cleared when the inspector closes. Not part of a shared link.
import { signal } from '@preact/signals';

export interface CellAnchor {
  x: number;
  y: number;
  size: number;
  canvas: HTMLCanvasElement; // focus returns here when the inspector closes
}

export const cellAnchor = signal<CellAnchor | null>(null);
