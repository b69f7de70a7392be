// The model view: every layer × head of the model as a small attention map (rows are
// queries, columns keys, viridis 0–1), drawn on canvases straight from the engine's
// weights; a click, Enter or Space selects that layer and head for every other view.
// Arrow keys move between the maps. Below, head search ranks the heads by how much
// they attend to the previous token and to the first token.
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { selectLayerAndHead } from '../gpt2/state';
import { selectHead } from '../store';
import { sliceOf } from '../tensor';
import { colorTable, kMaskedColor, parseColor } from './colors';
import { packRgb, paintWords } from './paint-cells';
import { Legend } from './common';
import type { ViewProps } from './types';

/** The weights (H, T, T) of each layer: the GPT-2's every layer, or the toy's one. */
function layersOf(r: ViewProps['r'], b: number): Float32Array[] {
  if (r.gpt2) return r.gpt2.attentions;
  const w = r.attention.trace!.weights;
  const per = r.model.H * r.model.T * r.model.T;
  return [sliceOf({ data: w.data, shape: [w.shape[0], per] }, b).data];
}

/** Whether key j is hidden from query i: GPT-2 is causal; the toy's masked scores are −∞. */
function maskOf(r: ViewProps['r'], b: number, h: number): (i: number, j: number) => boolean {
  if (r.gpt2) return (i, j) => j > i;
  const masked = sliceOf(r.attention.trace!.masked, b, h);
  return (i, j) => masked.get(i, j) === -Infinity;
}

function Thumb({
  data,
  T,
  size,
  masked,
}: {
  data: Float32Array;
  T: number;
  size: number;
  masked: (i: number, j: number) => boolean;
}) {
  const ref = useRef<HTMLCanvasElement>(null);
  useLayoutEffect(() => {
    const table = colorTable('prob', 1);
    const grey = packRgb(parseColor(kMaskedColor));
    paintWords(ref.current!, T, T, (i, j) => (masked(i, j) ? grey : table.word(data[i * T + j]!)));
  }, [data, T]);
  return (
    <canvas ref={ref} style={{ width: `${size}px`, height: `${size}px` }} aria-hidden="true" />
  );
}

/** Mean weight of queries 2..T on the key `key(i)` of each query i; one score per layer and head. */
function headScores(layers: Float32Array[], H: number, T: number, key: (i: number) => number) {
  const out: { layer: number; head: number; score: number }[] = [];
  layers.forEach((w, layer) => {
    for (let head = 0; head < H; head++) {
      let sum = 0;
      for (let i = 1; i < T; i++) sum += w[(head * T + i) * T + key(i)];
      out.push({ layer, head, score: sum / (T - 1) });
    }
  });
  return out.sort((a, b) => b.score - a.score || a.layer - b.layer || a.head - b.head).slice(0, 5);
}

export function ModelView({ r, b, head, width }: ViewProps) {
  const { H, T } = r.model;
  const layers = layersOf(r, b);
  const layer = r.gpt2 ? r.gpt2.layer : 0;
  const [focus, setFocus] = useState(layer * H + head);
  const grid = useRef<HTMLDivElement>(null);
  // A map's pitch: its button's padding and border (8 px) and the grid's gap (4 px) around it.
  const size = Math.max(12, Math.min(96, Math.floor((width - 36) / H) - 12));
  const choose = (l: number, h: number) => (r.gpt2 ? selectLayerAndHead(l, h) : selectHead(h));
  const move = (e: KeyboardEvent, at: number) => {
    const step = {
      ArrowRight: 1,
      ArrowLeft: -1,
      ArrowDown: H,
      ArrowUp: -H,
      Home: -at,
      End: layers.length * H - 1 - at,
    }[e.key];
    if (step === undefined) return;
    e.preventDefault();
    const next = Math.max(0, Math.min(layers.length * H - 1, at + step));
    setFocus(next);
    grid.current?.querySelectorAll<HTMLButtonElement>('button.thumb')[next]?.focus();
  };
  const search = (name: string, key: (i: number) => number) =>
    T < 2 ? null : (
      <div class="head-search">
        <h3>{name}</h3>
        <ol>
          {headScores(layers, H, T, key).map((s) => (
            <li>
              <button type="button" class="small" onClick={() => choose(s.layer, s.head)}>
                {`layer ${s.layer + 1}, head ${s.head + 1}: ${s.score.toFixed(3)}`}
              </button>
            </li>
          ))}
        </ol>
      </div>
    );
  return (
    <div class="model-view">
      <p class="explain">
        {`Every head of ${r.gpt2 ? `all ${layers.length} layers` : 'the page’s one attention layer'}: rows are layers, columns heads; each map is that head’s attention weights over the ${T} tokens (rows: queries, columns: keys). Select one to show it in the other views.${r.gpt2 ? '' : ' With the toy’s random weights the maps are chance; load a GPT-2 to see learned heads.'}`}
      </p>
      <Legend kind="prob" range={1} note="every map on the same 0–1 scale" />
      <div
        class="model-grid"
        ref={grid}
        role="group"
        aria-label="Attention maps by layer and head"
        style={{ gridTemplateColumns: `2rem repeat(${H}, ${size + 8}px)` }}
      >
        <span />
        {Array.from({ length: H }, (_, h) => (
          <span class="grid-head">{`h${h + 1}`}</span>
        ))}
        {layers.map((w, l) => [
          <span class="grid-head">{`L${l + 1}`}</span>,
          ...Array.from({ length: H }, (_, h) => {
            const at = l * H + h;
            const selected = l === layer && h === head;
            return (
              <button
                type="button"
                class={`thumb${selected ? ' current' : ''}`}
                tabIndex={at === focus ? 0 : -1}
                aria-label={`Layer ${l + 1}, head ${h + 1}`}
                aria-pressed={selected}
                onClick={() => {
                  setFocus(at);
                  choose(l, h);
                }}
                onKeyDown={(e) => move(e, at)}
              >
                <Thumb
                  data={w.subarray(h * T * T, (h + 1) * T * T)}
                  T={T}
                  size={size}
                  masked={maskOf(r, b, h)}
                />
              </button>
            );
          }),
        ])}
      </div>
      <div class="head-searches">
        {search('Heads that attend to the previous token', (i) => i - 1)}
        {search('Heads that attend to the first token', () => 0)}
      </div>
      <p class="hint">
        Head search: the mean weight that queries 2 to T give to that key, highest first.
      </p>
    </div>
  );
}
