// The threaded comparison itself, with no Node import, so Node
// (threads-bench.mjs) and a Chromium page (threads-browser.mjs) run the same
// code: attnscope's threaded engine against onnxruntime-web with the same
// thread count, H = 8, d = 64, causal and not, then attnscope's scaling curve
// over 1..N threads (1 = the single-thread build). Wall clock.
//
// attnscope runs as createAttnScope loads it by default: its relaxed-SIMD
// build where the runtime has relaxed SIMD (Chromium, Node 22+, Node 20 with
// --experimental-wasm-relaxed-simd), which is what a page gets. Where that is
// the relaxed build, the plain SIMD build is timed beside it in the same
// rounds: what a runtime without relaxed SIMD gets, as attention-bench.mjs
// reports it (onnxruntime-web's wasm has no relaxed-SIMD build).
//
// Each runtime is timed in its own blocks of calls, with the other one idle:
// onnxruntime-web's threads keep spinning on the cores for a while after its
// run returns (web/bench/README.md, "Threads", has the measurement), and a
// call of the other runtime made then shares its cores with them. So every
// block starts after kQuietMs without a call, longer than that spinning;
// then one untimed call, then the timed ones, back to back, and the block
// gives their median. A round is one block of each runtime, in turns, the
// order reversed every other round; each round gives one ratio per cell, and
// the table has the median of those ratios with their quartiles, so that a
// burst of load from elsewhere on the machine, or one block that caught the
// threads asleep, cannot decide a cell alone.
import { gaussian } from './gaussian.mjs';
import { multiHeadAttentionModel, onnxAttentionModel } from './onnx-model.mjs';
import { quartiles } from './quartiles.mjs';
import { warmUp } from './warm-up.mjs';

const [H, d] = [8, 64];
const median = (xs) => quartiles(xs).median;
const sleep = (ms) => new Promise((ok) => setTimeout(ok, ms));

/** ms without a call before each block: above onnxruntime-web's spinning after a run. */
export const kQuietMs = 150;
/** Timed calls per block. */
const kCallsPerBlock = 3;

/** Median ms of one block: kQuietMs of quiet, one untimed call, kCallsPerBlock timed calls. */
async function timeBlock(run) {
  await sleep(kQuietMs);
  await run();
  const times = [];
  for (let c = 0; c < kCallsPerBlock; c++) {
    const t0 = performance.now();
    await run();
    times.push(performance.now() - t0);
  }
  return median(times);
}

/**
 * `rounds` rounds of one block of each of `runs`, in turns (reversed in odd
 * rounds, so each goes first as often as last): for each run, its blocks'
 * medians in ms, one per round.
 */
export async function timeInRounds(runs, rounds) {
  for (const run of runs) {
    await sleep(kQuietMs);
    await warmUp(run, 8000);
  }
  const times = runs.map(() => []);
  for (let r = 0; r < rounds; r++) {
    const order = runs.map((_, i) => i);
    if (r % 2) order.reverse();
    for (const i of order) times[i].push(await timeBlock(runs[i]));
  }
  return times;
}

/** Per-round ratios of two runs' block times (a / b), as median and quartiles. */
function roundRatios(a, b) {
  return quartiles(a.map((x, r) => x / b[r]));
}

/** "1.23× [1.10, 1.31]": a ratio's median and quartiles. */
function formatRatio({ median: m, q1, q3 }) {
  return `${m.toFixed(2)}× [${q1.toFixed(2)}, ${q3.toFixed(2)}]`;
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

/** The inputs of one problem, and attnscope's call on them. */
function problem(T, causal) {
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
  return { q, k, v, call };
}

/**
 * attnscope (each of `engines`: the default build, and the plain SIMD one
 * where the default is relaxed) against onnxruntime-web's best configuration
 * (the one with the lowest median over the rounds) on one problem: each one's
 * median ms, and per build the per-round ratio onnxruntime-web / attnscope as
 * median and quartiles.
 */
async function compareProblem({ ort, engines, T, causal, threads, rounds }) {
  const { q, k, v, call } = problem(T, causal);
  const peers = await ortConfigurations(ort, { q, k, v, T, causal, threads });
  try {
    const times = await timeInRounds(
      [...engines.map((e) => async () => e.attention(call)), ...peers.map((p) => p.run)],
      rounds,
    );
    const ours = times.slice(0, engines.length);
    const theirs = times.slice(engines.length);
    const medians = theirs.map(median);
    const best = medians.indexOf(Math.min(...medians));
    const ratioTo = (mine) => (best < 0 ? quartiles([]) : roundRatios(theirs[best], mine));
    return {
      attnscope: median(ours[0]),
      ort: best < 0 ? NaN : medians[best],
      ratio: ratioTo(ours[0]),
      ...(ours[1] ? { attnscopeSimd128: median(ours[1]), ratioSimd128: ratioTo(ours[1]) } : {}),
      ortBest: best < 0 ? '' : peers[best].name,
      ortAll: Object.fromEntries(peers.map((p, i) => [p.name, medians[i]])),
      roundMs: {
        attnscope: ours[0],
        ...(ours[1] ? { 'attnscope simd128': ours[1] } : {}),
        ...Object.fromEntries(peers.map((p, i) => [p.name, theirs[i]])),
      },
    };
  } finally {
    for (const p of peers) await p.session.release();
  }
}

/**
 * (n, simd) → one engine on n threads with createAttnScope's `simd` option
 * ('auto' or 'simd128'), created once and kept: the table and the scaling
 * curve share the engine on every thread.
 */
function engineCache(createAttnScope) {
  const engines = new Map();
  return async (n, simd) => {
    const key = `${n} ${simd}`;
    if (!engines.has(key)) engines.set(key, await createAttnScope({ threads: n, simd }));
    const engine = engines.get(key);
    if (engine.threads !== n)
      throw new Error(`asked ${n} threads, the engine runs ${engine.threads}`);
    return engine;
  };
}

/**
 * Runs the table and the scaling curve, printing as it goes through `log`.
 * `createAttnScope` is the package's, as the runtime loads it; `ort` is
 * onnxruntime-web with env.wasm.numThreads already set to `threads`.
 */
export async function runThreadsBench({
  ort,
  createAttnScope,
  threads,
  sizes,
  rounds,
  scalingT,
  log,
}) {
  const engineWith = engineCache(createAttnScope);
  const engine = await engineWith(threads, 'auto');
  const relaxed = engine.simdArch.includes('relaxed');
  const engines = relaxed ? [engine, await engineWith(threads, 'simd128')] : [engine];
  log(
    `H = ${H}, d = ${d}, ${threads} threads each, ${rounds} rounds of one block per runtime ` +
      `(${kQuietMs} ms quiet, 1 untimed + ${kCallsPerBlock} timed calls)\n` +
      `attnscope: the build createAttnScope picks here (${engine.simdArch})` +
      (relaxed ? '; the plain SIMD build beside it (simd128), in the same rounds' : '') +
      '\nms: medians over the rounds; ratios: median [quartiles] of the per-round ratios',
  );
  log(
    '     T  mask    | attnscope ms | ORT-web ms | ORT-web / attnscope' +
      (relaxed ? ' | simd128 ms | ORT-web / simd128  ' : '') +
      ' | ORT-web best',
  );
  const table = [];
  for (const T of sizes) {
    for (const causal of [false, true]) {
      const r = await compareProblem({ ort, engines, T, causal, threads, rounds });
      table.push({ T, causal, ...r });
      const plain = relaxed
        ? ` | ${r.attnscopeSimd128.toFixed(2).padStart(10)} | ${formatRatio(r.ratioSimd128).padStart(19)}`
        : '';
      log(
        `${String(T).padStart(6)}  ${(causal ? 'causal' : 'none').padEnd(7)} | ${r.attnscope.toFixed(2).padStart(12)} | ${r.ort.toFixed(2).padStart(10)} | ${formatRatio(r.ratio).padStart(19)}${plain} | ${r.ortBest}`,
      );
    }
  }

  // Each engine measured its register tile's height on its first long call:
  // the height it runs is part of what was timed.
  const tileRows = Object.fromEntries(engines.map((e) => [e.simdArch, e.matmulTileRows]));
  log(
    `register tile rows (engine.matmulTileRows): ${Object.entries(tileRows)
      .map(([arch, rows]) => `${rows} (${arch})`)
      .join(', ')}`,
  );

  // Every thread count's engine in the same rounds: a speed-up is the
  // per-round ratio to the single-thread build's block.
  log(
    `\nScaling at T = ${scalingT}, the ${engine.simdArch} build ` +
      '(1 = its single-thread build; speed-ups per round)',
  );
  log(' threads | none ms | speed-up            | causal ms | speed-up');
  const counts = [];
  for (let n = 1; n <= threads; n++) counts.push(await engineWith(n, 'auto'));
  const curves = [];
  for (const causal of [false, true]) {
    const { call } = problem(scalingT, causal);
    curves.push(
      await timeInRounds(
        counts.map((e) => async () => e.attention(call)),
        rounds,
      ),
    );
  }
  const scaling = counts.map((_, i) => {
    const [none, causal] = curves.map((times) => ({
      ms: median(times[i]),
      speedUp: roundRatios(times[0], times[i]),
    }));
    log(
      `${String(i + 1).padStart(8)} | ${none.ms.toFixed(2).padStart(7)} | ${formatRatio(none.speedUp).padEnd(19)} | ${causal.ms.toFixed(2).padStart(9)} | ${formatRatio(causal.speedUp)} | ${counts[i].matmulTileRows}-row tiles`,
    );
    return {
      threads: i + 1,
      tileRows: counts[i].matmulTileRows,
      none: none.ms,
      causal: causal.ms,
      speedUp: { none: none.speedUp, causal: causal.speedUp },
    };
  });
  return {
    H,
    d,
    simdArch: engine.simdArch,
    quietMs: kQuietMs,
    callsPerBlock: kCallsPerBlock,
    tileRows,
    table,
    scaling,
  };
}
