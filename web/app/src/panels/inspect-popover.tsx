// On a narrow screen the inspector opens as a popover next to the tapped cell: kept
// on screen, closed by Escape (focus goes back to the heatmap), by tapping outside
// or by its close button. Wide screens show the inspector beside the figure instead.
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { cellAnchor, type CellAnchor } from '../anchor';
import { Mount } from '../mount';
import { useInspected } from './inspector';

const kNarrow = '(max-width: 700px)';
const kGap = 6; // px between the cell and the popover
const kMargin = 8; // px kept free at the screen's edges

function useNarrow(): boolean {
  const [narrow, setNarrow] = useState(() => window.matchMedia(kNarrow).matches);
  useEffect(() => {
    const query = window.matchMedia(kNarrow);
    const follow = () => setNarrow(query.matches);
    query.addEventListener('change', follow);
    return () => query.removeEventListener('change', follow);
  }, []);
  return narrow;
}

function close(returnFocus: boolean): void {
  const anchor = cellAnchor.value;
  cellAnchor.value = null;
  if (returnFocus) anchor?.canvas.focus();
}

export function InspectPopover() {
  const anchor = cellAnchor.value;
  const narrow = useNarrow();
  // Only a narrow screen with a tapped cell builds a second derivation.
  return narrow && anchor ? <Popover anchor={anchor} /> : null;
}

function Popover({ anchor }: { anchor: CellAnchor }) {
  const node = useInspected();
  const box = useRef<HTMLDivElement>(null);
  const open = node !== null;

  // Below the cell if it fits, else above; if neither, on the roomier side, shortened
  // to fit (it scrolls). Never over the cell, never off the screen's sides.
  useLayoutEffect(() => {
    const el = box.current;
    if (!open || !el) return;
    const vw = document.documentElement.clientWidth;
    const vh = window.innerHeight;
    el.style.maxHeight = '';
    const { width, height } = el.getBoundingClientRect();
    const below = anchor.y + anchor.size + kGap;
    const roomBelow = vh - kMargin - below;
    const roomAbove = anchor.y - kGap - kMargin;
    let top: number;
    if (height <= roomBelow) top = below;
    else if (height <= roomAbove) top = anchor.y - kGap - height;
    else if (roomBelow >= roomAbove) {
      el.style.maxHeight = `${roomBelow}px`;
      top = below;
    } else {
      el.style.maxHeight = `${roomAbove}px`;
      top = kMargin;
    }
    const left = Math.max(kMargin, Math.min(vw - kMargin - width, anchor.x + anchor.size / 2 - width / 2));
    el.style.left = `${left + window.scrollX}px`;
    el.style.top = `${top + window.scrollY}px`;
  });
  // Focus moves into the popover when it opens at a cell.
  useEffect(() => {
    if (open) box.current?.focus({ preventScroll: true });
  }, [open, anchor]);
  useEffect(() => {
    if (!open) return;
    const onKey = (e: KeyboardEvent) => {
      if (e.key === 'Escape') {
        e.preventDefault();
        close(true);
      }
    };
    // A tap on a heatmap re-anchors the popover through the click; anywhere else closes it.
    const onDown = (e: PointerEvent) => {
      const target = e.target as Node;
      if (!box.current?.contains(target) && !(target instanceof HTMLCanvasElement && target.classList.contains('heatmap'))) close(false);
    };
    document.addEventListener('keydown', onKey);
    document.addEventListener('pointerdown', onDown);
    return () => {
      document.removeEventListener('keydown', onKey);
      document.removeEventListener('pointerdown', onDown);
    };
  }, [open]);
  if (!open) return null;
  return (
    <div id="inspect-popover" class="inspect-popover" role="dialog" aria-label="How this number is made" tabIndex={-1} ref={box}>
      <button type="button" class="small close" aria-label="Close the inspector" onClick={() => close(true)}>×</button>
      <Mount node={node} />
    </div>
  );
}
