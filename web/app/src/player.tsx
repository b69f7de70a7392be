// Play / pause / step / speed / scrub over a number of frames: the pipeline's
// stages and the walkthrough's steps. The frames are the player's owner's; the
// player only asks for one (`go`).
import { useEffect, useState } from 'preact/hooks';

export interface PlayerProps {
  name: string;
  frames: number;
  index: number;
  go: (i: number) => void;
  describe: (i: number) => string;
}

const kSpeeds = [[2400, '0.5×'], [1200, '1×'], [600, '2×'], [250, '5×']] as const;

export function Player({ name, frames, index, go, describe }: PlayerProps) {
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(1200);
  const last = Math.max(0, frames - 1);
  const to = (i: number) => go(Math.max(0, Math.min(last, i)));
  useEffect(() => {
    if (!playing) return;
    if (index >= last) {
      setPlaying(false);
      return;
    }
    const timer = window.setTimeout(() => to(index + 1), speed);
    return () => clearTimeout(timer);
  }, [playing, index, speed, last]);
  const button = (act: string, label: string, text: string, onClick: () => void) => (
    <button type="button" data-act={act} aria-label={label} title={label} onClick={onClick}>{text}</button>
  );
  return (
    <div class="player" role="group" aria-label={`${name} controls`}>
      {button('first', `First step of ${name}`, '|◀', () => to(0))}
      {button('back', `Step ${name} back`, '◀', () => to(index - 1))}
      {button('play', playing ? `Pause ${name}` : `Play ${name}`, playing ? '❚❚' : '▶', () => {
        if (!playing && index >= last) to(0);
        setPlaying(!playing);
      })}
      {button('forward', `Step ${name} forward`, '▶|', () => to(index + 1))}
      <input type="range" min={0} max={last} value={String(index)} aria-label={`${name} position`} onInput={(e) => to(Number((e.currentTarget as HTMLInputElement).value))} />
      <select aria-label={`${name} speed`} value={String(speed)} onChange={(e) => setSpeed(Number((e.currentTarget as HTMLSelectElement).value))}>
        {kSpeeds.map(([ms, label]) => <option value={String(ms)}>{label}</option>)}
      </select>
      <span class="player-status" aria-live="polite">{describe(index)}</span>
    </div>
  );
}
