// The page: the store's parts wired to the engine, the form and the components.
// State: store.ts; running the engine: run.ts; the form: controls.ts; the views:
// views/registry.ts; the panels: panels/.
import './styles/page.css';
import './styles/controls.css';
import './styles/input-bar.css';
import './styles/figures.css';
import './styles/models.css';
import './styles/train.css';
import './styles/analysis.css';
import { effect } from '@preact/signals';
import { render } from 'preact';
import { bindControls, kNumberFields, showClamp } from './controls';
import { byId } from './dom';
import { showEngineInfo } from './engine-info';
import { keepLinkUpToDate, writeLink } from './link';
import { Chips } from './panels/chips';
import { FoldedEditor } from './panels/editor';
import { InspectPopover } from './panels/inspect-popover';
import { Gpt2Tokens } from './panels/gpt2-tokens';
import { Inspector } from './panels/inspector';
import { followModelChoice, ModelPicker, ModelSource } from './panels/model-picker';
import { NextToken } from './panels/next-token';
import { Gpt2Analysis } from './panels/gpt2-analysis';
import { renderChecks, renderNotes } from './panels/notes';
import { Pipeline } from './panels/pipeline';
import { TrainPanel } from './panels/train/train-panel';
import { Walk } from './panels/walk';
import { startRunning } from './run';
import { inputs, loadState, run, view } from './store';
import { decodeLink } from './url-state';
import { forgetTheme } from './views/heatmap';

function mountComponents(): void {
  render(<ModelPicker />, byId('model-box'));
  render(
    <>
      <ModelSource />
      <Gpt2Tokens />
    </>,
    byId('gpt2-box'),
  );
  // Beside the figures, under the inspector: the model's answer stays in view.
  render(<NextToken />, byId('next-token-box'));
  render(<Gpt2Analysis />, byId('gpt2-analysis-box'));
  render(<Chips />, byId('chips-box'));
  render(<FoldedEditor />, byId('editor'));
  render(<Pipeline />, byId('pipeline-body'));
  render(<Inspector />, byId('inspect-body'));
  render(<InspectPopover />, byId('inspect-popover-box'));
  render(<Walk />, byId('walk-box'));
  render(<TrainPanel />, byId('train-box'));
  // The tutorial checks and the notes on repeated words follow the result.
  effect(() => {
    const current = run.value;
    if (!current) return;
    renderChecks(current.result, inputs.value.preset);
    renderNotes(current.result, Math.min(view.value.sel.seq, current.result.model.B - 1));
  });
}

async function openLink(): Promise<void> {
  try {
    const decoded = await decodeLink(location.hash);
    if (!decoded) return;
    loadState(decoded.state);
    // A link asking for out-of-range sizes gets the same notes as the fields.
    for (const f of kNumberFields) if (f in decoded.raw) showClamp(f, decoded.raw[f]);
  } catch (e) {
    const err = byId('error');
    err.hidden = false;
    err.textContent = e instanceof Error ? e.message : String(e);
  }
}

async function start(): Promise<void> {
  bindControls();
  mountComponents();
  window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
    forgetTheme();
    view.value = { ...view.value }; // redraws the canvases in the new colours
  });
  await openLink();
  followModelChoice(); // the model the link names (the KJV model by default) starts loading
  keepLinkUpToDate();
  // The page counts as ready once a result is on screen and the link holds it.
  startRunning(async (id) => {
    await writeLink().catch(() => undefined);
    if (id > 0) document.body.dataset.ready = String(id);
  });
  showEngineInfo();
}

void start();
