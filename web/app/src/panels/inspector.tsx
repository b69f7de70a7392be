// The inspected cell: how its number is made, from the engine's own intermediates.
// The cell is (sel.query, sel.key) of the matrix named by view.inspect, found in the
// current stage first, so a link or a preset reopens it.
import { useMemo } from 'preact/hooks';
import { inspectCell as derivation } from '../inspect';
import { Mount } from '../mount';
import { run, view } from '../store';

/** The derivation of the inspected cell, or null when none is inspected. */
export function useInspected(): HTMLElement | null {
  const current = run.value;
  const v = view.value;
  return useMemo(() => {
    if (!current || !v.inspect) return null;
    const { result: r, stages } = current;
    const b = Math.min(v.sel.seq, r.model.B - 1);
    const head = Math.min(v.sel.head, r.model.H - 1);
    const order = [stages[v.stage], ...stages].filter(Boolean);
    for (const st of order) {
      const m = st.matrices(r, b, head).find((x) => x.id === v.inspect);
      if (m && v.sel.query < m.rows && v.sel.key < m.cols) return derivation(r, m, b, head, v.sel.query, v.sel.key);
    }
    return null;
  }, [current, v.inspect, v.sel, v.stage]);
}

export function Inspector() {
  const node = useInspected();
  if (!node) return <p class="hint">Click or focus a cell of any heatmap to see how its number is made.</p>;
  return <Mount node={node} />;
}
