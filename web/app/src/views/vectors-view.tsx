// The focused token's vectors as bars, one per component, up to the current stage:
// x, then q, k, v, then the head's output. One colour scale for all of them, the
// same as the heatmaps' (purple negative, orange positive), and one height scale.
import { stageTime } from '../anim/clock';
import { vectorAt } from '../anim/frames';
import { matrixCsv } from '../export';
import { fmt, full } from '../format';
import { largestAbs, sliceOf, type Slice } from '../tensor';
import { colorScale } from './colors';
import { DataTable, ExportBar, Legend, svgOf } from './common';
import type { MatrixView } from './matrix';
import type { ViewProps } from './types';

interface Series {
  name: string;
  values: Float32Array;
}

export function VectorsView({ r, stages, view, b, head, query }: ViewProps) {
  const t = r.attention.trace!;
  const at = (id: string) => stages.findIndex((s) => s.id === id) <= view.stage;
  // The bars build up within the stage that makes them; the table and the CSV hold the engine's values.
  const stageId = stages[view.stage].id;
  const time = stageTime.value;
  const pick = (name: string, s: Slice, vector?: 'q' | 'k' | 'v' | 'output') => {
    const values = s.row(query);
    return {
      name,
      values,
      shown: vector ? vectorAt(r, stageId, vector, values, b, head, query, time) : values,
    };
  };
  const series: (Series & { shown: Float32Array })[] = [pick('x (input)', sliceOf(r.x, b))];
  if (at('qkv'))
    series.push(
      pick('q (query)', sliceOf(t.q, b, head), 'q'),
      pick('k (key)', sliceOf(t.k, b, head), 'k'),
      pick('v (value)', sliceOf(t.v, b, head), 'v'),
    );
  if (at('headOutputs')) series.push(pick('output', sliceOf(t.headOutputs, b, head), 'output'));
  const range =
    largestAbs(
      ...series.map((s) => ({
        rows: 1,
        cols: s.values.length,
        get: (_i: number, j: number) => s.values[j],
        row: () => s.values,
        data: s.values,
      })),
    ) || 1;
  const tok = r.model.tokens[b][query];
  const title = `Vectors of token ${query + 1} “${tok}” (head ${head + 1})`;
  const bars = (final: boolean) => (
    <BarsSvg
      title={title}
      range={range}
      series={series.map((ser) => ({ name: ser.name, values: final ? ser.values : ser.shown }))}
    />
  );
  // The CSV in long form: one row per component, whatever each vector's length.
  const flat = series.flatMap((s) => Array.from(s.values));
  const long: MatrixView = {
    id: 'vectors',
    title,
    rows: series.reduce((n, s) => n + s.values.length, 0),
    cols: 1,
    kind: 'signed',
    rowAxis: 'vector component',
    colAxis: 'value',
    colLabels: ['value'],
    rowLabels: series.flatMap((s) => Array.from(s.values, (_, i) => `${s.name} ${i + 1}`)),
    get: (i) => flat[i],
  };
  return (
    <figure class="matrix">
      <figcaption>
        <strong>{title}</strong>
        {
          ' · the focused query (change it in the heatmap, the Head view or section 3); vectors appear as the pipeline reaches them'
        }
      </figcaption>
      <Legend
        kind="signed"
        range={range}
        note="bar height and colour on one scale for all vectors"
      />
      {bars(false)}
      {/* The files hold the engine's values, whatever moment of the build-up is on screen. */}
      <ExportBar
        name={title}
        exports={{
          svg: () => svgOf(bars(true)),
          csv: () => matrixCsv(long),
        }}
      />
      <DataTable m={long} />
    </figure>
  );
}

/** The bars of `series` on one scale: the page's picture, or an export's. */
function BarsSvg({ title, series, range }: { title: string; series: Series[]; range: number }) {
  const color = colorScale('signed', range);
  const width = 640;
  const rowH = 86;
  const height = 36 + series.length * rowH;
  const left = 110;
  return (
    <svg
      xmlns="http://www.w3.org/2000/svg"
      width={width}
      height={height}
      viewBox={`0 0 ${width} ${height}`}
      class="bars-view"
      font-family="system-ui, sans-serif"
      font-size={11}
      role="img"
      aria-label={`${title}; each bar is one component; the data table lists the values.`}
    >
      <title>{title}</title>
      <text x={4} y={14} font-weight={600} font-size={13} fill="currentColor">
        {title}
      </text>
      {series.map((ser, k) => {
        const top = 30 + k * rowH;
        const n = ser.values.length;
        const bw = Math.max(1, Math.min(40, Math.floor((width - left - 10) / Math.max(1, n))));
        const mid = top + 34;
        return (
          <g data-series={ser.name}>
            <text x={4} y={mid} dominant-baseline="middle" font-weight={600} fill="currentColor">
              {ser.name}
            </text>
            <line
              x1={left}
              x2={left + bw * n}
              y1={mid}
              y2={mid}
              stroke="currentColor"
              stroke-opacity={0.4}
            />
            {Array.from(ser.values, (v, i) => {
              const hgt = (Math.abs(v) / range) * 30;
              return (
                <g>
                  <rect
                    x={left + i * bw + 1}
                    y={v >= 0 ? mid - hgt : mid}
                    width={Math.max(1, bw - 2)}
                    height={Math.max(0.5, hgt)}
                    fill={color(v)}
                    stroke="currentColor"
                    stroke-opacity={0.35}
                    stroke-width={0.5}
                    data-value={v}
                  >
                    <title>{`${ser.name}[${i + 1}] = ${full(v)}`}</title>
                  </rect>
                  {bw >= 30 && (
                    <text
                      x={left + (i + 0.5) * bw}
                      y={v >= 0 ? mid + 12 : mid - 6}
                      text-anchor="middle"
                      font-size={9}
                      fill="currentColor"
                    >
                      {fmt(v, 2)}
                    </text>
                  )}
                </g>
              );
            })}
          </g>
        );
      })}
    </svg>
  );
}
