// Said above a modern view when the sentence is longer than what it draws.
import { kModernTokens, type HeadTensors } from './engine-call';

export function ClipNote({ t }: { t: HeadTensors }) {
  if (t.T >= t.total) return null;
  return (
    <p class="note clip-note">{`This view computes on the first ${kModernTokens} of the sentence’s ${t.total} tokens (every cell is drawn).`}</p>
  );
}
