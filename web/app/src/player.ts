// Play / pause / step / speed / scrub over a number of frames. Used for the pipeline
// stages and for the per-query walkthrough. With reduced motion, playing still steps
// but nothing is animated between frames.
import { h, setText, setValue } from './dom';

export class Player {
  readonly element: HTMLElement;
  private index = 0;
  private frames = 1;
  private timer: number | null = null;
  private readonly playBtn: HTMLButtonElement;
  private readonly range: HTMLInputElement;
  private readonly status: HTMLElement;
  private readonly speed: HTMLSelectElement;

  constructor(private readonly name: string, private readonly onChange: (i: number) => void, private readonly describe: (i: number) => string) {
    const btn = (label: string, text: string, act: () => void, id: string) => {
      const b = h('button', { type: 'button', 'aria-label': label, title: label, 'data-act': id }, text);
      b.addEventListener('click', act);
      return b;
    };
    this.playBtn = btn(`Play ${name}`, '▶', () => this.toggle(), 'play');
    this.range = h('input', { type: 'range', min: 0, max: 0, value: 0, 'aria-label': `${name} position` });
    this.range.addEventListener('input', () => this.go(Number(this.range.value)));
    this.speed = h('select', { 'aria-label': `${name} speed` },
      h('option', { value: 2400 }, '0.5×'), h('option', { value: 1200, selected: true }, '1×'), h('option', { value: 600 }, '2×'), h('option', { value: 250 }, '5×'));
    this.speed.addEventListener('change', () => { if (this.timer !== null) { this.pause(); this.play(); } });
    this.status = h('span', { class: 'player-status', 'aria-live': 'polite' });
    this.element = h('div', { class: 'player', role: 'group', 'aria-label': `${name} controls` },
      btn(`First step of ${name}`, '|◀', () => this.go(0), 'first'),
      btn(`Step ${name} back`, '◀', () => this.go(this.index - 1), 'back'),
      this.playBtn,
      btn(`Step ${name} forward`, '▶|', () => this.go(this.index + 1), 'forward'),
      this.range, this.speed, this.status);
  }

  setFrames(frames: number, index = this.index): void {
    this.frames = Math.max(1, frames);
    if (this.range.max !== String(this.frames - 1)) this.range.max = String(this.frames - 1);
    this.go(Math.min(index, this.frames - 1), false);
  }

  get position(): number {
    return this.index;
  }

  go(i: number, notify = true): void {
    this.index = Math.max(0, Math.min(this.frames - 1, i));
    setValue(this.range, String(this.index));
    setText(this.status, this.describe(this.index));
    if (notify) this.onChange(this.index);
  }

  toggle(): void {
    if (this.timer === null) this.play();
    else this.pause();
  }

  play(): void {
    if (this.index >= this.frames - 1) this.go(0);
    this.playBtn.textContent = '❚❚';
    this.playBtn.setAttribute('aria-label', `Pause ${this.name}`);
    this.timer = window.setInterval(() => {
      if (this.index >= this.frames - 1) this.pause();
      else this.go(this.index + 1);
    }, Number(this.speed.value));
  }

  pause(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
    this.playBtn.textContent = '▶';
    this.playBtn.setAttribute('aria-label', `Play ${this.name}`);
  }
}
