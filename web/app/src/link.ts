// The address bar holds the whole state. It is written once things are quiet:
// compressing the state and history.replaceState take milliseconds, so while a run
// is pending the run's painted result writes it instead.
import { effect } from '@preact/signals';
import { byId } from './dom';
import { runPending } from './run';
import { appState } from './store';
import { linkState } from './url-state';

let timer = 0;

export async function writeLink(): Promise<void> {
  clearTimeout(timer);
  const link = await linkState(appState.value);
  history.replaceState(null, '', link.hash ?? `${location.pathname}${location.search}`);
  const note = byId('link-note');
  note.textContent = link.note;
  note.hidden = !link.note;
}

export function keepLinkUpToDate(): void {
  effect(() => {
    void appState.value;
    clearTimeout(timer);
    timer = window.setTimeout(() => {
      if (!runPending) void writeLink().catch(() => undefined);
    }, 150);
  });
}
