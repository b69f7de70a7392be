// The threaded comparison itself, with no Node import, so Node
// (threads-bench.mjs) and a Chromium page (threads-browser.mjs) run the same
// code: attnscope's threaded engine against onnxruntime-web with the same
// thread count, H = 8, d = 64, causal and not, then attnscope's scaling curve
// over 1..N threads (1 = the single-thread build). Wall-clock medians; the two
// runtimes are timed alternately, run by run, so a burst of load on the
// machine hits both.
import { gaussian } from './gaussian.mjs';
import { multiHeadAttentionModel, onnxAttentionModel } from './onnx-model.mjs';

const [H, d] = [8, 64];
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/**
 * Calls `run` untimed until three calls in a row agree within 15 % (or 8 s
 * pass): V8 first runs wasm from its baseline compiler and swaps in optimised
 * code as its background compiler finishes, which takes seconds on a busy
 * machine, in Chromium and in Node.
 */
async function warmUp(run) {
  const start = performance.now();
  const last = [];
  while (performance.now() - start < 8000) {
    const t0 = performance.now();
    await run();
    last.push(performance.now() - t0);
    if (last.length > 3) last.shift();
    if (last.length === 3 && Math.max(...last) <= 1.15 * Math.min(...last)) return;
  }
}

/** ms of one attnscope call and of the faster of two ONNX graphs, alternately. */
async function timePair({ ort, engine, T, causal, threads, reps, withOrt }) {
  const q = gaussian(H * T * d, 1),
    k = gaussian(H * T * d, 2),
    v = gaussian(H * T * d, 3);
  const call = {
    q,
    k,
    v,
    shape: [1, H, T, d],
    mask: causal ? 'causal' : 'none',
    trace: false,
    out: new Float32Array(H * T * d),
  };
  const sessions = [];
  if (withOrt) {
    for (const [build, tokens] of [
      [onnxAttentionModel, false],
      [multiHeadAttentionModel, true],
    ]) {
      try {
        const session = await ort.InferenceSession.create(build(H, T, d, causal), {
          executionProviders: ['wasm'],
          graphOptimizationLevel: 'all',
          intraOpNumThreads: threads,
        });
        // The token layout's inputs hold the same numbers in another order: equal work.
        const dims = tokens ? [1, T, H * d] : [1, H, T, d];
        sessions.push({
          session,
          feeds: {
            q: new ort.Tensor('float32', q, dims),
            k: new ort.Tensor('float32', k, dims),
            v: new ort.Tensor('float32', v, dims),
          },
          times: [],
        });
      } catch {
        // A graph this onnxruntime-web build cannot run is left out.
      }
    }
  }
  await warmUp(() => engine.attention(call));
  for (const s of sessions)
    await warmUp(async () => (await s.session.run(s.feeds)).output.dispose?.());
  const ours = [];
  for (let r = 0; r < reps; r++) {
    let t0 = performance.now();
    engine.attention(call);
    ours.push(performance.now() - t0);
    for (const s of sessions) {
      t0 = performance.now();
      const out = await s.session.run(s.feeds);
      s.times.push(performance.now() - t0);
      out.output.dispose?.();
    }
  }
  for (const s of sessions) await s.session.release();
  const ortMs = sessions.length ? Math.min(...sessions.map((s) => median(s.times))) : NaN;
  return { attnscope: median(ours), ort: ortMs };
}

/**
 * Runs the table and the scaling curve, printing as it goes through `log`.
 * `engineWith(n)` gives an attnscope engine on n threads; `ort` is
 * onnxruntime-web with env.wasm.numThreads already set to `threads`.
 */
export async function runThreadsBench({ ort, engineWith, threads, sizes, reps, scalingT, log }) {
  log(`H = ${H}, d = ${d}, ${threads} threads each, medians of ${reps}`);
  log('     T  mask    | attnscope ms | ORT-web ms | ratio');
  const table = [];
  for (const T of sizes) {
    for (const causal of [false, true]) {
      const engine = await engineWith(threads);
      const r = await timePair({ ort, engine, T, causal, threads, reps, withOrt: true });
      table.push({ T, causal, ...r });
      log(
        `${String(T).padStart(6)}  ${(causal ? 'causal' : 'none').padEnd(7)} | ${r.attnscope.toFixed(2).padStart(12)} | ${r.ort.toFixed(2).padStart(10)} | ${(r.ort / r.attnscope).toFixed(2)}×`,
      );
    }
  }

  log(`\nScaling at T = ${scalingT} (1 = the single-thread build)`);
  log(' threads | none ms | speed-up | causal ms | speed-up');
  const scaling = [];
  for (let n = 1; n <= threads; n++) {
    const engine = await engineWith(n);
    const time = (causal) =>
      timePair({ ort, engine, T: scalingT, causal, threads: n, reps, withOrt: false });
    const none = (await time(false)).attnscope;
    const causal = (await time(true)).attnscope;
    scaling.push({ threads: n, none, causal });
    const [base] = scaling;
    log(
      `${String(n).padStart(8)} | ${none.toFixed(2).padStart(7)} | ${(base.none / none).toFixed(2).padStart(7)}× | ${causal.toFixed(2).padStart(9)} | ${(base.causal / causal).toFixed(2)}×`,
    );
  }
  return { H, d, table, scaling };
}
