// The input bar's folded settings: a disclosure button shows and hides them. A note
// on a folded field (a value clamped from a link, a preset or a file) unfolds them,
// so that the note is seen.
import { byId } from '../dom';

export function setSettingsOpen(open: boolean): void {
  byId('more-settings').setAttribute('aria-expanded', String(open));
  byId('settings').hidden = !open;
}

/** Unfolds the settings when `el` is one of them. */
export function revealSetting(el: Element): void {
  if (byId('settings').contains(el)) setSettingsOpen(true);
}

export function bindSettingsFold(): void {
  byId('more-settings').addEventListener('click', () => setSettingsOpen(byId('settings').hidden));
}
