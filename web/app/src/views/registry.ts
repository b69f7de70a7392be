// Every view of the result, in tab order. Adding a view: its module, and a line here.
import { AllHeadsView } from './all-heads-view';
import { BatchView } from './batch-view';
import { HeadView } from './head-view';
import { HeatmapView } from './heatmap-view';
import { ModelView } from './model-view';
import type { ViewDef } from './types';
import { VectorsView } from './vectors-view';
import { kModernViews } from './modern/modern-views';

export const kViews: ViewDef[] = [
  { id: 'heatmap', label: 'Heatmap', Component: HeatmapView },
  { id: 'lines', label: 'Head view', Component: HeadView },
  { id: 'heads', label: 'All heads', Component: AllHeadsView },
  { id: 'bars', label: 'Vectors', Component: VectorsView },
  { id: 'batch', label: 'Batch', Component: BatchView },
  { id: 'model', label: 'Model', Component: ModelView },
  ...kModernViews,
];

/** The view of a tab id; an unknown id (an old or edited link) shows the first. */
export const viewOf = (id: string): ViewDef => kViews.find((v) => v.id === id) ?? kViews[0];
