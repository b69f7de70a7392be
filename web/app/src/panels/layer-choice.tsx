// The layer selector beside the head selector, while a GPT-2 is loaded.
import { gpt2Layer, loadedGpt2, selectLayer } from '../gpt2/state';

export function LayerChoice() {
  const g = loadedGpt2.value;
  if (!g) return null;
  return (
    <label>
      layer{' '}
      <select id="sel-layer" value={String(gpt2Layer.value)} onChange={(e) => selectLayer(Number((e.currentTarget as HTMLSelectElement).value))}>
        {Array.from({ length: g.config.layers }, (_, l) => (
          <option value={String(l)}>{`layer ${l + 1}`}</option>
        ))}
      </select>
    </label>
  );
}
