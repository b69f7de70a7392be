// What every view gets, and how it is registered (views/registry.ts).
import type { ComponentType } from 'preact';
import type { RunResult } from '../compute';
import type { Stage } from '../stages';
import type { ViewState } from '../store';

export interface ViewProps {
  r: RunResult;
  stages: Stage[];
  view: ViewState;
  b: number; // the selected sequence, within the batch
  head: number; // the selected head
  query: number; // the focused query row
  width: number; // px available
}

export interface ViewDef {
  id: string; // in links and in the tab's id: tab-<id>
  label: string;
  Component: ComponentType<ViewProps>;
}
