// The "verified" panel: the engine's float32 result against a double-precision
// reference computed in its own worker on the same input.
import type { RunResult } from '../compute';
import { byId, h } from '../dom';
import type { VerifyRequest, WeightsSent } from '../reference-worker';

type Comparison = { maxRelError: number; maxAbsError: number; count: number };
let verifier: Worker | null = null;
let busy = false; // the verifier is still working on an older check
// The projections the verifier holds (it keeps the last ones sent). A loaded GPT-2's
// stay the same arrays from edit to edit of a layer, and the page never writes into a
// model's weights once built (an edit builds a new model), so the same arrays are the
// same values: they are not cloned to the worker again, megabytes on every edit.
let held: WeightsSent | null = null;

/** `onDone(ok)` is called once the check has finished (ok: it ran and passed). */
export function renderVerified(
  r: RunResult,
  isCurrent: () => boolean,
  onDone: (ok: boolean) => void = () => undefined,
): void {
  const m = r.model;
  const causal = m.maskSpec === 'causal' || (typeof m.maskSpec === 'object' && m.maskSpec.causal);
  const lengths = typeof m.maskSpec === 'object' ? m.maskSpec.lengths : null;
  const t = r.attention.trace!;
  // An older check still running is no longer wanted: stop it. An idle worker is
  // kept, so a check does not start (and load) a new worker every time.
  if (busy) {
    verifier?.terminate();
    verifier = null;
  }
  if (!verifier) {
    verifier = new Worker(new URL('../reference-worker.ts', import.meta.url), { type: 'module' });
    held = null;
  }
  busy = true;
  const body = byId('verified-body');
  body.replaceChildren(
    h('p', { class: 'hint' }, 'Checking against the double-precision reference…'),
  );
  verifier.onmessage = (e: MessageEvent<{ rows: [string, Comparison][]; millis: number }>) => {
    busy = false;
    if (!isCurrent()) return;
    const { rows, millis } = e.data;
    const worst = Math.max(...rows.map(([, c]) => c.maxRelError));
    const ok = worst < 1e-4;
    const table = h(
      'table',
      {},
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          h('th', { scope: 'col' }, 'tensor'),
          h('th', { scope: 'col' }, 'values'),
          h('th', { scope: 'col' }, 'max relative error'),
          h('th', { scope: 'col' }, 'max absolute error'),
        ),
      ),
      h(
        'tbody',
        {},
        ...rows.map(([name, c]) =>
          h(
            'tr',
            {},
            h('th', { scope: 'row' }, name),
            h('td', {}, String(c.count)),
            h('td', {}, c.maxRelError.toExponential(2)),
            h('td', {}, c.maxAbsError.toExponential(2)),
          ),
        ),
      ),
    );
    body.replaceChildren(
      h(
        'p',
        { class: ok ? 'ok' : 'bad', 'data-max-rel': String(worst) },
        ok ? '✓ ' : '✗ ',
        `Engine (float32, WebAssembly SIMD) vs a double-precision JavaScript reference on this input: max relative error ${worst.toExponential(2)}.`,
      ),
      h(
        'div',
        {
          class: 'table-scroll',
          tabindex: 0,
          role: 'region',
          'aria-label': 'Engine against the reference, per tensor',
        },
        table,
      ),
      h(
        'p',
        { class: 'hint' },
        `Relative error = |engine − reference| / max(|reference|, 1% of the largest |reference| in that tensor). Reference computed in ${millis.toFixed(0)} ms in its own worker.${r.block ? ' The transformer block’s later stages are not part of this check.' : ''}`,
      ),
    );
    onDone(ok);
  };
  verifier.onerror = (e) => {
    busy = false;
    verifier?.terminate(); // a failed worker is not reused
    verifier = null;
    if (!isCurrent()) return;
    body.replaceChildren(
      h(
        'p',
        { class: 'bad' },
        `The double-precision check could not run: ${e.message || 'the reference worker failed'}.`,
      ),
    );
    onDone(false);
  };
  const { wq, wk, wv } = m.weights;
  const weights = { wq: wq.data, wk: wk.data, wv: wv.data };
  const same = held?.wq === weights.wq && held.wk === weights.wk && held.wv === weights.wv;
  held = weights;
  const copies = {
    q: t.q.data.slice(),
    k: t.k.data.slice(),
    v: t.v.data.slice(),
    weights: t.weights.data.slice(),
    concat: t.concat.data.slice(),
    x: r.x.data.slice(),
  };
  verifier.postMessage(
    {
      input: {
        B: m.B,
        T: m.T,
        C: m.C,
        H: m.H,
        dK: m.dK,
        dV: m.dV,
        x: copies.x,
        scaleFactor: m.scaleFactor,
        causal: !!causal,
        lengths,
      },
      weights: same ? null : weights,
      engine: copies,
    } satisfies VerifyRequest,
    Object.values(copies).map((a) => a.buffer),
  ); // transferred copies: no structured clone of megabytes
}
