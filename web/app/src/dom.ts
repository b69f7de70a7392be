// Safe DOM construction: text always goes through textContent, never through HTML
// parsing, so a token like <img src=x onerror=alert(1)> is shown as text.
type Attrs = Record<string, string | number | boolean | null | undefined>;
type Child = Node | string | number | null | undefined | false;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

const kSvgNs = 'http://www.w3.org/2000/svg';
export function s<K extends keyof SVGElementTagNameMap>(
  tag: K,
  attrs: Attrs = {},
  ...children: Child[]
): SVGElementTagNameMap[K] {
  const el = document.createElementNS(kSvgNs, tag);
  setAttrs(el, attrs);
  append(el, children);
  return el;
}

function setAttrs(el: Element, attrs: Attrs): void {
  for (const [k, v] of Object.entries(attrs)) {
    if (v === null || v === undefined || v === false) continue;
    if (k.startsWith('on')) throw new Error('use addEventListener'); // no inline handlers
    el.setAttribute(k, v === true ? '' : String(v));
  }
}

function append(el: Element, children: Child[]): void {
  for (const c of children) {
    if (c === null || c === undefined || c === false) continue;
    el.append(typeof c === 'number' ? String(c) : c);
  }
}

export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`missing #${id}`);
  return el as T;
}

/**
 * Writes a form control's value only when it differs. Chromium's form tracking
 * answers any write to a control on the page, even of the value it holds, with a
 * task that lays out the whole page, panels skipped off screen included: 4–16 ms
 * here, landing in the middle of an update.
 */
export function setValue(
  el: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement,
  value: string,
): void {
  if (el.value !== value) el.value = value;
}

/** setValue for a checkbox. */
export function setChecked(el: HTMLInputElement, on: boolean): void {
  if (el.checked !== on) el.checked = on;
}

/** Writes an element's text only when it differs: an equal text is still a new text node to lay out. */
export function setText(el: Element, text: string): void {
  if (el.textContent !== text) el.textContent = text;
}

/** setText for an attribute. */
export function setAttr(el: Element, name: string, value: string): void {
  if (el.getAttribute(name) !== value) el.setAttribute(name, value);
}

export function announce(text: string): void {
  const live = document.getElementById('live');
  if (live) live.textContent = text;
}
