// The data table behind every chart, built only when opened, capped in size (the CSV
// export has everything).
import { h } from '../dom';
import { fmt, full } from '../format';
import type { MatrixView } from './matrix';

const kMaxRows = 64;
const kMaxCols = 32;

export function dataTable(m: MatrixView): HTMLElement {
  const details = h('details', { class: 'data-table' }, h('summary', {}, `Data table: ${m.title}`));
  details.addEventListener('toggle', () => {
    if (!details.open || details.querySelector('table')) return;
    const rows = Math.min(m.rows, kMaxRows);
    const cols = Math.min(m.cols, kMaxCols);
    const table = h('table', {}, h('caption', {}, `${m.title}. Rows: ${m.rowAxis}. Columns: ${m.colAxis}.`));
    const head = h('tr', {}, h('th', { scope: 'col' }, `${m.rowAxis} \\ ${m.colAxis}`));
    for (let j = 0; j < cols; j++) head.append(h('th', { scope: 'col' }, m.colLabels[j]));
    table.append(h('thead', {}, head));
    const body = h('tbody');
    for (let i = 0; i < rows; i++) {
      const tr = h('tr', {}, h('th', { scope: 'row' }, m.rowLabels[i]));
      for (let j = 0; j < cols; j++) {
        const v = m.get(i, j);
        tr.append(h('td', { title: full(v) }, fmt(v, 4)));
      }
      body.append(tr);
    }
    table.append(body);
    details.append(h('div', { class: 'table-scroll' }, table));
    if (rows < m.rows || cols < m.cols) details.append(h('p', { class: 'note' }, `Showing ${rows} of ${m.rows} rows and ${cols} of ${m.cols} columns; export CSV for all values.`));
  });
  return details;
}
