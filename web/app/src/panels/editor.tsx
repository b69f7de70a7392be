// The matrix editor: pick X or a weight matrix, select a cell (click, or arrow keys
// on the focused heatmap) and type its new value; the value becomes an edit of the
// model inputs.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { Model } from '../model';
import { currentModel } from '../run';
import { inputs, setInputs, shownInputs, view } from '../store';
import type { MatrixName } from '../state';
import { sliceOf } from '../tensor';
import { HeatmapCanvas } from '../views/common';
import { indexLabels, type MatrixView } from '../views/matrix';

const kNames: [MatrixName, string][] = [['x', 'X (embeddings)'], ['wq', 'W_Q'], ['wk', 'W_K'], ['wv', 'W_V'], ['wo', 'W_O'], ['w1', 'FF W₁'], ['w2', 'FF W₂']];

function matrixOf(name: MatrixName, model: Model, seq: number): { view: MatrixView; key: (i: number, j: number) => string } {
  if (name === 'x') {
    const b = Math.min(seq, model.B - 1);
    const x = sliceOf({ data: model.embeddings, shape: [model.B, model.T, model.C] }, b);
    return {
      view: { id: 'edit-x', title: 'X: embeddings (before positional encoding)', rows: x.rows, cols: x.cols, get: x.get, rowLabels: indexLabels(model.tokens[b]),
        colLabels: Array.from({ length: x.cols }, (_, j) => `${j + 1}`), rowAxis: 'token (row)', colAxis: 'feature (column)', kind: 'signed' },
      key: (i, j) => `x:${b},${i},${j}`,
    };
  }
  const w = model.weights[name];
  return {
    view: { id: `edit-${name}`, title: name.toUpperCase(), rows: w.rows, cols: w.cols, get: (i, j) => w.data[i * w.cols + j], rowLabels: Array.from({ length: w.rows }, (_, i) => `${i + 1}`),
      colLabels: Array.from({ length: w.cols }, (_, j) => `${j + 1}`), rowAxis: 'input (row)', colAxis: 'feature (column)', kind: 'signed' },
    key: (i, j) => `${name}:${i},${j}`,
  };
}

/**
 * The editor inside its folded box: drawn only while the box is open, so a result
 * does not redraw a matrix nobody sees.
 */
export function FoldedEditor() {
  const probe = useRef<HTMLSpanElement>(null);
  const [open, setOpen] = useState(false);
  useLayoutEffect(() => {
    const box = probe.current!.closest('details');
    if (!box) return setOpen(true);
    const follow = () => setOpen(box.open);
    follow();
    box.addEventListener('toggle', follow);
    return () => box.removeEventListener('toggle', follow);
  }, []);
  return <><span ref={probe} hidden />{open && <Editor />}</>;
}

function Editor() {
  void shownInputs.value; // redrawn with each result
  const [name, setName] = useState<MatrixName>('x');
  const [cell, setCell] = useState<[number, number]>([0, 0]);
  const { view: m, key } = matrixOf(name, currentModel(), view.value.sel.seq);
  const [i, j] = [Math.min(cell[0], m.rows - 1), Math.min(cell[1], m.cols - 1)];
  const value = String(m.get(i, j));
  return (
    <>
      <label>edit <select id="edit-matrix" value={name} onChange={(e) => { setName((e.currentTarget as HTMLSelectElement).value as MatrixName); setCell([0, 0]); }}>
        {kNames.map(([id, label]) => <option value={id}>{label}</option>)}
      </select></label>
      <p class="hint" id="edit-hint">Select a cell of the matrix below (click, or focus it and use the arrow keys), then type a new value.</p>
      <p class="edit-row">
        <span>{`${m.title} [${i + 1}, ${j + 1}] (${m.rowLabels[i]}) = `}</span>
        <input key={`${name}:${i},${j}:${value}`} type="number" step="any" id="edit-value" aria-label="value of the selected cell" defaultValue={value}
          onChange={(e) => {
            // An emptied or unparsable field reads as '' (Number('') is 0): ignore it.
            const field = e.currentTarget as HTMLInputElement;
            const v = field.value.trim() === '' ? Number.NaN : Number(field.value);
            if (Number.isFinite(v)) setInputs({ edits: { ...inputs.value.edits, [key(i, j)]: v }, preset: null });
          }} />
      </p>
      <div class="scroll"><HeatmapCanvas m={m} opts={{ selected: [i, j], maxWidth: 420, onSelect: (a, c) => setCell([a, c]) }} /></div>
    </>
  );
}
