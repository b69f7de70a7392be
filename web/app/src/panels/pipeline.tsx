// The pipeline: its stages (a player steps through them), the sequence and head
// selectors, the view tabs from the registry and the current view.
import type { RefObject } from 'preact';
import { useLayoutEffect, useRef, useState } from 'preact/hooks';
import { playStage, scrubStage, stageTime } from '../anim/clock';
import { kPad } from '../model';
import { Player } from '../player';
import { waitingForKjv } from '../gpt2/state';
import { LayerChoice } from './layer-choice';
import { NamedHeads } from './named-heads';
import { run, selectHead, selectSequence, showStage, showTab, view } from '../store';
import { kViews, viewOf } from '../views/registry';

function useWidth(): [RefObject<HTMLDivElement | null>, number] {
  const ref = useRef<HTMLDivElement>(null);
  const [width, setWidth] = useState(720);
  useLayoutEffect(() => {
    const el = ref.current!;
    setWidth(el.clientWidth || 720);
    const ro = new ResizeObserver(() => setWidth(el.clientWidth || 720));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  return [ref, width];
}

function Choice({ id, label, n, value, text, pick }: { id: string; label: string; n: number; value: number; text: (k: number) => string; pick: (k: number) => void }) {
  return (
    <label>{label} <select id={id} value={String(value)} disabled={n <= 1} onChange={(e) => pick(Number((e.currentTarget as HTMLSelectElement).value))}>
      {Array.from({ length: n }, (_, k) => <option value={String(k)}>{text(k)}</option>)}
    </select></label>
  );
}

export function Pipeline() {
  const [ref, width] = useWidth();
  const current = run.value;
  const v = view.value;
  if (!current)
    return (
      <div ref={ref} class="pipeline-body">
        {waitingForKjv.value && (
          <p class="model-wait" id="model-wait">
            Loading attnscope’s KJV model (5.3 MB, from this site; nothing is sent anywhere). Its
            attention on the text above will show here.
          </p>
        )}
        <div id="view" role="tabpanel" tabIndex={-1} />
      </div>
    );
  const { result: r, stages } = current;
  const stage = Math.min(v.stage, stages.length - 1);
  const b = Math.min(v.sel.seq, r.model.B - 1);
  const head = Math.min(v.sel.head, r.model.H - 1);
  const query = Math.min(v.sel.query, r.model.T - 1);
  const def = viewOf(v.tab);
  // A stage reached by a step plays its build-up; the scrubber below shows any moment of it.
  const go = (k: number) => {
    showStage(k);
    playStage();
  };
  const t = stageTime.value;
  return (
    <div ref={ref} class="pipeline-body">
      <div class="stage-row">
      <ol id="stages" class="stages" aria-label="Stages">
        {stages.map((st, k) => (
          <li class={k < stage ? 'done' : k === stage ? 'current' : ''}>
            <button type="button" data-stage={st.id} aria-current={k === stage ? 'step' : undefined} onClick={() => go(k)}>{st.label}</button>
          </li>
        ))}
      </ol>
      <div id="stage-player">
        <Player name="pipeline" frames={stages.length} index={stage} go={go} describe={(i) => `Stage ${i + 1} of ${stages.length}: ${stages[i].label}`} />
      </div>
      </div>
      <div class="explain-row">
      <p id="stage-explain" class="explain">{stages[stage].explain(r)}</p>
      <label class="scrub">this stage, step by step <input type="range" id="stage-time" min="0" max="100" value={String(Math.round(t * 100))}
        aria-label={`Build-up of stage ${stages[stage].label}`} onInput={(e) => scrubStage(Number((e.currentTarget as HTMLInputElement).value) / 100)} />
        <button type="button" class="small" id="replay-stage" onClick={() => playStage()}>replay</button></label>
      </div>
      <div class="tab-row">
      <div class="tabs" role="tablist" aria-label="Views">
        {kViews.map((d, k) => (
          <button role="tab" type="button" id={`tab-${d.id}`} data-tab={d.id} aria-controls="view" aria-selected={d === def} tabIndex={d === def ? 0 : -1}
            onClick={() => showTab(d.id)}
            onKeyDown={(e) => {
              const step = e.key === 'ArrowRight' ? 1 : e.key === 'ArrowLeft' ? -1 : 0;
              if (!step) return;
              const next = kViews[(k + step + kViews.length) % kViews.length];
              showTab(next.id);
              requestAnimationFrame(() => document.getElementById(`tab-${next.id}`)?.focus());
            }}>{d.label}</button>
        ))}
      </div>
      <div class="selectors">
        <Choice id="sel-seq" label="sequence" n={r.model.B} value={b} pick={selectSequence}
          text={(k) => `${k + 1}: ${r.model.tokens[k].filter((t) => t !== kPad).slice(0, 5).join(' ')}…`} />
        <LayerChoice />
        <Choice id="sel-head" label="head" n={r.model.H} value={head} pick={selectHead} text={(k) => `head ${k + 1}`} />
        <NamedHeads />
      </div>
      </div>
      <div id="view" role="tabpanel" tabIndex={-1} data-tab={def.id} aria-labelledby={`tab-${def.id}`}>
        <def.Component r={r} stages={stages} view={{ ...v, stage }} b={b} head={head} query={query} width={Math.max(300, Math.min(1100, width))} />
      </div>
    </div>
  );
}
