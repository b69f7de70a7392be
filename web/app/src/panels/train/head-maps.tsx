// Every head of every layer on the probe sequence, as it forms: one small attention map
// per head (rows are queries, columns keys; viridis 0–1, the causal upper triangle grey).
// Each map is a button: it selects the head whose gradient is shown. A head with a named
// pattern on the held-out batch says which under its map.
import { colorTable, kMaskedColor, parseColor } from '../../views/colors';
import { PixelCanvas } from './pixels';
import type { TrainedHeads } from '../../train/head-scores';
import { namedByHead, shortName } from './trained-heads';

export function HeadMaps({
  attentions,
  heads,
  T,
  selected,
  onSelect,
  size,
  scores,
}: {
  attentions: Float32Array[];
  heads: number;
  T: number;
  selected: { layer: number; head: number };
  onSelect: (layer: number, head: number) => void;
  size: number;
  /** The heads' named patterns on the held-out batch. */
  scores: TrainedHeads;
}) {
  const named = namedByHead(scores, heads);
  const table = colorTable('prob', 1);
  const grey = parseColor(kMaskedColor);
  return (
    <div class="train-maps" id="train-maps">
      {attentions.map((w, layer) => (
        <div class="train-layer" key={layer}>
          <span class="train-layer-name">{`Layer ${layer + 1}`}</span>
          {Array.from({ length: heads }, (_, head) => {
            const on = selected.layer === layer && selected.head === head;
            const name = named.get(layer * heads + head);
            const caption = `head ${head + 1}${name ? ` · ${shortName(scores, heads, name)}` : ''}`;
            return (
              <button
                type="button"
                key={head}
                class="train-head"
                aria-pressed={on}
                aria-label={`Layer ${layer + 1}, ${caption}: show its gradient`}
                data-pattern={name?.pattern}
                onClick={() => onSelect(layer, head)}
              >
                <PixelCanvas
                  rows={T}
                  cols={T}
                  width={size}
                  height={size}
                  color={(i, j) => (j > i ? grey : table.at(w[(head * T + i) * T + j]!))}
                />
                <span>{caption}</span>
              </button>
            );
          })}
        </div>
      ))}
    </div>
  );
}
