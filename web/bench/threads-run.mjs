// The threaded comparison itself, with no Node import, so Node
// (threads-bench.mjs) and a Chromium page (threads-browser.mjs) run the same
// code: attnscope's threaded engine against onnxruntime-web with the same
// thread count, H = 8, d = 64, causal and not, then attnscope's scaling curve
// over 1..N threads (1 = the single-thread build). Wall-clock medians.
//
// Each runtime is timed in its own blocks of calls, with the other one idle:
// onnxruntime-web's threads keep spinning on the cores for a while after its
// run returns (web/bench/README.md, "Threads", has the measurement), and a
// call of the other runtime made then shares its cores with them. So every
// block starts after kQuietMs without a call, longer than that spinning;
// then one untimed call, then the timed ones, back to back. The runtimes'
// blocks take turns, so that a burst of load from elsewhere on the machine
// hits them all.
import { gaussian } from './gaussian.mjs';
import { multiHeadAttentionModel, onnxAttentionModel } from './onnx-model.mjs';

const [H, d] = [8, 64];
const median = (xs) => [...xs].sort((a, b) => a - b)[xs.length >> 1];
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** ms without a call before each block: above onnxruntime-web's spinning after a run. */
export const kQuietMs = 150;
/** Timed calls per block. */
const kCallsPerBlock = 3;

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

/**
 * Median ms of each of `runs` over `reps` timed calls, in blocks: the
 * runtimes take turns, each block after kQuietMs of quiet and one untimed call.
 */
export async function timeInBlocks(runs, reps) {
  for (const run of runs) {
    await sleep(kQuietMs);
    await warmUp(run);
  }
  const times = runs.map(() => []);
  while (times.some((t) => t.length < reps)) {
    for (const [i, run] of runs.entries()) {
      await sleep(kQuietMs);
      await run();
      for (let c = 0; c < kCallsPerBlock && times[i].length < reps; c++) {
        const t0 = performance.now();
        await run();
        times[i].push(performance.now() - t0);
      }
    }
  }
  return times.map(median);
}

/**
 * onnxruntime-web's configurations for one problem: the ONNX Attention
 * operator on (1, H, T, d) and com.microsoft's MultiHeadAttention on the
 * token layout, each with its threads' spinning on (the default) and off
 * (session.intra_op.allow_spinning = 0); one the build cannot run is left out.
 */
async function ortConfigurations(ort, { q, k, v, T, causal, threads }) {
  const configurations = [];
  for (const [graph, build, tokens] of [
    ['Attention', onnxAttentionModel, false],
    ['MultiHeadAttention', multiHeadAttentionModel, true],
  ]) {
    for (const spinning of [true, false]) {
      try {
        const session = await ort.InferenceSession.create(build(H, T, d, causal), {
          executionProviders: ['wasm'],
          graphOptimizationLevel: 'all',
          intraOpNumThreads: threads,
          ...(spinning ? {} : { extra: { session: { intra_op: { allow_spinning: '0' } } } }),
        });
        // The token layout's inputs hold the same numbers in another order: equal work.
        const dims = tokens ? [1, T, H * d] : [1, H, T, d];
        const feeds = {
          q: new ort.Tensor('float32', q, dims),
          k: new ort.Tensor('float32', k, dims),
          v: new ort.Tensor('float32', v, dims),
        };
        configurations.push({
          name: `${graph}${spinning ? '' : ', no spinning'}`,
          session,
          run: async () => (await session.run(feeds)).output.dispose?.(),
        });
      } catch {
        // A graph this onnxruntime-web build cannot run is left out.
      }
    }
  }
  return configurations;
}

/** ms of one attnscope call and of onnxruntime-web's best configuration (NaN without it). */
async function timeProblem({ ort, engine, T, causal, threads, reps, withOrt }) {
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
  const peers = withOrt ? await ortConfigurations(ort, { q, k, v, T, causal, threads }) : [];
  try {
    const [ours, ...theirs] = await timeInBlocks(
      [async () => engine.attention(call), ...peers.map((p) => p.run)],
      reps,
    );
    const best = theirs.indexOf(Math.min(...theirs));
    return {
      attnscope: ours,
      ort: best < 0 ? NaN : theirs[best],
      ortBest: best < 0 ? '' : peers[best].name,
      ortAll: Object.fromEntries(peers.map((p, i) => [p.name, theirs[i]])),
    };
  } finally {
    for (const p of peers) await p.session.release();
  }
}

/**
 * Runs the table and the scaling curve, printing as it goes through `log`.
 * `engineWith(n)` gives an attnscope engine on n threads; `ort` is
 * onnxruntime-web with env.wasm.numThreads already set to `threads`.
 */
export async function runThreadsBench({ ort, engineWith, threads, sizes, reps, scalingT, log }) {
  log(
    `H = ${H}, d = ${d}, ${threads} threads each, medians of ${reps}, each runtime in its own blocks of calls`,
  );
  log('     T  mask    | attnscope ms | ORT-web ms | ratio | ORT-web best');
  const table = [];
  for (const T of sizes) {
    for (const causal of [false, true]) {
      const engine = await engineWith(threads);
      const r = await timeProblem({ ort, engine, T, causal, threads, reps, withOrt: true });
      table.push({ T, causal, ...r });
      log(
        `${String(T).padStart(6)}  ${(causal ? 'causal' : 'none').padEnd(7)} | ${r.attnscope.toFixed(2).padStart(12)} | ${r.ort.toFixed(2).padStart(10)} | ${(r.ort / r.attnscope).toFixed(2)}× | ${r.ortBest}`,
      );
    }
  }

  log(`\nScaling at T = ${scalingT} (1 = the single-thread build)`);
  log(' threads | none ms | speed-up | causal ms | speed-up');
  const scaling = [];
  for (let n = 1; n <= threads; n++) {
    const engine = await engineWith(n);
    const time = (causal) =>
      timeProblem({ ort, engine, T: scalingT, causal, threads: n, reps, withOrt: false });
    const none = (await time(false)).attnscope;
    const causal = (await time(true)).attnscope;
    scaling.push({ threads: n, none, causal });
    const [base] = scaling;
    log(
      `${String(n).padStart(8)} | ${none.toFixed(2).padStart(7)} | ${(base.none / none).toFixed(2).padStart(7)}× | ${causal.toFixed(2).padStart(9)} | ${(base.causal / causal).toFixed(2)}×`,
    );
  }
  return { H, d, quietMs: kQuietMs, table, scaling };
}
