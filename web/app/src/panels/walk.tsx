// "One query at a time", as in the tutorial: the focused query's scores, softmax,
// weighted values and sum, step by step. Its player runs over every query's steps;
// moving to another query asks the store to focus it.
import { useState } from 'preact/hooks';
import { Player } from '../player';
import { run, selectQuery, view } from '../store';
import { kWalkSteps, WalkSteps } from '../walkthrough';

const n = kWalkSteps.length;

export function Walk() {
  const [step, setStep] = useState(n - 1);
  const current = run.value;
  const v = view.value;
  const r = current?.result;
  const T = r?.model.T ?? 1;
  const b = r ? Math.min(v.sel.seq, r.model.B - 1) : 0;
  const head = r ? Math.min(v.sel.head, r.model.H - 1) : 0;
  const query = Math.min(v.sel.query, T - 1);
  if (!r) return null;
  const go = (i: number) => {
    setStep(i % n);
    if (Math.floor(i / n) !== query) selectQuery(Math.floor(i / n));
  };
  return (
    <>
      <label>query <select id="walk-query" value={String(query)} onChange={(e) => { setStep(n - 1); selectQuery(Number((e.currentTarget as HTMLSelectElement).value)); }}>
        {r.model.tokens[b].map((t, k) => <option value={String(k)}>{`${k + 1}: ${t}`}</option>)}
      </select></label>
      <div id="walk-player">
        <Player name="walkthrough" frames={T * n} index={query * n + step} go={go}
          describe={(i) => `Input ${Math.floor(i / n) + 1}, step ${(i % n) + 1} of ${n}: ${kWalkSteps[i % n]}`} />
      </div>
      <div id="walk-body"><WalkSteps r={r} b={b} hd={head} query={query} upTo={step} /></div>
    </>
  );
}
