// attnscope's attention variants on the fast path (trace: false), one thread (the decode step
// also on every hardware thread), through the package's public API:
//   GQA  H = 32, Hkv = 8, d = 128, T = 1024, causal, against MHA (Hkv = 32): time per query head,
//        and against onnxruntime-web's com.microsoft GroupQueryAttention on the same inputs
//   a decode step  Tq = 1, Tk = 4096, H = 32, Hkv = 8, d = 128: µs per step, and K/V bytes read per
//        µs against the machine's memory copy bandwidth (TypedArray.set within a WebAssembly.Memory),
//        on one thread and on every hardware thread (decode-bench.mjs, which says how)
//   a sliding window  W = 512 at T = 16 384, causal (H = 1, d = 64), against full causal
//   RoPE and ALiBi at T = 1024 (H = 8, d = 64, causal), against plain attention
// The three comparisons (GQA/MHA, RoPE/plain, ALiBi/plain) run as interleaved pairs, the order
// alternating, so that a slow spell of the shared machine lands on both sides of a pair; each pair
// gives one ratio, and the median ratio is printed with its quartiles.
//
//   node --expose-gc web/bench/variants-bench.mjs [--quick] [--clock=cpu] [--out=dir]
//        [--only=gqa,ort,decode,window,positions]   (sections to run; default all)
// Run by attention-bench.mjs (npm run bench) after its own tables; writes <out>/variants.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { attentionArgs, cpuMs } from './inputs.mjs';
import { loadAttnScope } from './attnscope-runner.mjs';
import { createOrtGroupQueryAttention } from './ort-runner.mjs';
import { runDecodeBench } from './decode-bench.mjs';
import { quantile } from './quartiles.mjs';

const median = (xs) => quantile(xs, 0.5);

const fmt = (x, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '—');

/** Median ms of `reps` runs of `run` after one untimed run, on the chosen clock. */
function time(run, reps, clock) {
  run();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const [w0, c0] = [performance.now(), cpuMs()];
    run();
    times.push(clock === 'cpu' ? cpuMs() - c0 : performance.now() - w0);
  }
  return median(times);
}

/** One run's time in ms on the chosen clock. */
function timeOnce(run, clock) {
  const [w0, c0] = [performance.now(), cpuMs()];
  run();
  return clock === 'cpu' ? cpuMs() - c0 : performance.now() - w0;
}

/**
 * `pairs` interleaved runs of `runA` and `runB` (which goes first alternates) after one untimed
 * run each: the median ms of each, and the ratio b/a of each pair as its median and quartiles.
 */
function timePairs(runA, runB, pairs, clock) {
  runA();
  runB();
  const a = [];
  const b = [];
  const ratios = [];
  for (let i = 0; i < pairs; i++) {
    let ta;
    let tb;
    if (i % 2 === 0) {
      ta = timeOnce(runA, clock);
      tb = timeOnce(runB, clock);
    } else {
      tb = timeOnce(runB, clock);
      ta = timeOnce(runA, clock);
    }
    a.push(ta);
    b.push(tb);
    ratios.push(tb / ta);
  }
  return {
    aMs: median(a),
    bMs: median(b),
    ratio: median(ratios),
    ratioQ1: quantile(ratios, 0.25),
    ratioQ3: quantile(ratios, 0.75),
    pairs,
  };
}

/** A fast-path attention call on (1, H, Tq, d) queries and (1, Hkv, Tk, d) keys and values. */
function attentionCall(engine, { H, Hkv, Tq, Tk, d }, options = {}) {
  const args = attentionArgs({ H, Hkv, Tq, Tk, d }, options);
  return () => engine.attention(args);
}

/** Median ms of `reps` runs of an async peer after one untimed run (see time()). */
async function timeAsync(run, reps, clock) {
  await run();
  const times = [];
  for (let i = 0; i < reps; i++) {
    const [w0, c0] = [performance.now(), cpuMs()];
    await run();
    times.push(clock === 'cpu' ? cpuMs() - c0 : performance.now() - w0);
  }
  return median(times);
}

export async function runVariantsBench({ quick = false, clock = 'wall', outDir, only } = {}) {
  const runs = (section) => !only || only.includes(section);
  const engine = await loadAttnScope();
  if (!engine) {
    console.log('variants: dist/ not built, skipped');
    return null;
  }
  const reps = quick ? 2 : 5;
  const result = { simdArch: engine.simdArch, clock };
  console.log(
    `\nattention variants (attnscope fast path, ${engine.simdArch}, one thread, ${clock} time)`,
  );

  const T = quick ? 256 : 1024;
  const gqa = { H: 32, Hkv: 8, Tq: T, Tk: T, d: 128 };
  if (runs('gqa')) {
    const gqaPairs = timePairs(
      attentionCall(engine, { ...gqa, Hkv: 32 }),
      attentionCall(engine, gqa),
      quick ? 4 : 12,
      clock,
    );
    const gqaMs = gqaPairs.bMs;
    const mhaMs = gqaPairs.aMs;
    // MHA's time over GQA's, pair by pair (> 1: GQA faster per query head).
    const gqaSpeedup = 1 / gqaPairs.ratio;
    result.gqa = {
      ...gqa,
      mask: 'causal',
      gqaMs,
      mhaMs,
      msPerQueryHead: gqaMs / 32,
      mhaMsPerQueryHead: mhaMs / 32,
      speedupOverMha: gqaSpeedup,
      speedupQuartiles: [1 / gqaPairs.ratioQ3, 1 / gqaPairs.ratioQ1],
      pairs: gqaPairs.pairs,
    };
    result.gqa.met = gqaSpeedup >= 1;
    console.log(
      `  GQA H=32 Hkv=8 d=128 T=${T} causal: ${fmt(gqaMs)} ms (${fmt((1000 * gqaMs) / 32, 0)} µs per query head); ` +
        `MHA (Hkv=32) ${fmt(mhaMs)} ms: GQA ${fmt(gqaSpeedup)}× per query head ` +
        `(quartiles [${fmt(1 / gqaPairs.ratioQ3)}, ${fmt(1 / gqaPairs.ratioQ1)}] over ${gqaPairs.pairs} pairs)`,
    );
  }
  if (runs('ort')) {
    result.gqa ??= { ...gqa, mask: 'causal' };
    // The same inputs in onnxruntime-web's GroupQueryAttention; its output is
    // checked against attnscope's before its time counts.
    try {
      const args = attentionArgs(gqa);
      const ours = engine.attention(args).output.data;
      const peer = await createOrtGroupQueryAttention({ ...args, ...gqa, T });
      const ortMs = await timeAsync(() => peer.run(), reps, clock);
      let worst = 0;
      const theirs = peer.output();
      for (let i = 0; i < ours.length; i++) worst = Math.max(worst, Math.abs(theirs[i] - ours[i]));
      await peer.release();
      if (!(worst < 1e-4)) throw new Error(`its output differs from attnscope's by ${worst}`);
      Object.assign(result.gqa, { ortGqaMs: ortMs, ratioToOrt: ortMs / gqaMs });
      result.gqa.metOrt = ortMs / gqaMs >= 1.5;
      console.log(
        `  onnxruntime-web GroupQueryAttention, same inputs: ${fmt(ortMs)} ms: attnscope ${fmt(ortMs / gqaMs)}× (max |Δ| ${worst.toExponential(1)})`,
      );
    } catch (e) {
      result.gqa.ortError = String(e.message ?? e);
      console.log(`  onnxruntime-web GroupQueryAttention: not run (${result.gqa.ortError})`);
    }
  }
  if (runs('decode')) result.decode = await runDecodeBench({ quick });
  if (runs('window')) {
    const long = quick ? 4096 : 16384;
    const windowed = { H: 1, Hkv: 1, Tq: long, Tk: long, d: 64 };
    const fullMs = time(attentionCall(engine, windowed), 1, clock);
    const windowMs = time(
      attentionCall(engine, windowed, { mask: { causal: true, window: 512 } }),
      quick ? 3 : 5,
      clock,
    );
    result.window = {
      ...windowed,
      window: 512,
      fullCausalMs: fullMs,
      windowMs,
      speedup: fullMs / windowMs,
    };
    result.window.met = fullMs / windowMs >= 10;
    console.log(
      `  window W=512 T=${long} causal (H=1 d=64): ${fmt(windowMs)} ms; full causal ${fmt(fullMs)} ms: ${fmt(fullMs / windowMs, 1)}×`,
    );
  }
  if (runs('positions')) {
    const small = { H: 8, Hkv: 8, Tq: T, Tk: T, d: 64 };
    const positionPairs = quick ? 6 : 20;
    const rope = timePairs(
      attentionCall(engine, small),
      attentionCall(engine, small, { rope: {} }),
      positionPairs,
      clock,
    );
    const alibi = timePairs(
      attentionCall(engine, small),
      attentionCall(engine, small, { bias: 'alibi' }),
      positionPairs,
      clock,
    );
    result.positions = {
      ...small,
      mask: 'causal',
      plainMs: (rope.aMs + alibi.aMs) / 2,
      ropeMs: rope.bMs,
      alibiMs: alibi.bMs,
      ropeOverhead: rope.ratio - 1,
      ropeOverheadQuartiles: [rope.ratioQ1 - 1, rope.ratioQ3 - 1],
      alibiOverhead: alibi.ratio - 1,
      alibiOverheadQuartiles: [alibi.ratioQ1 - 1, alibi.ratioQ3 - 1],
      pairs: positionPairs,
    };
    result.positions.met = rope.ratio <= 1.1 && alibi.ratio <= 1.1;
    const pct = (r) => `${r >= 1 ? '+' : ''}${fmt(100 * (r - 1), 0)}%`;
    console.log(
      `  T=${T} H=8 d=64 causal, ${positionPairs} interleaved pairs each: ` +
        `RoPE ${fmt(rope.bMs)} ms against plain ${fmt(rope.aMs)} ms: ${pct(rope.ratio)} ` +
        `(quartiles ${pct(rope.ratioQ1)}, ${pct(rope.ratioQ3)}); ` +
        `ALiBi ${fmt(alibi.bMs)} ms against plain ${fmt(alibi.aMs)} ms: ${pct(alibi.ratio)} ` +
        `(quartiles ${pct(alibi.ratioQ1)}, ${pct(alibi.ratioQ3)})`,
    );
  }
  if (outDir) {
    mkdirSync(outDir, { recursive: true });
    writeFileSync(resolve(outDir, 'variants.json'), JSON.stringify(result, null, 2) + '\n');
  }
  return result;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const argv = process.argv.slice(2);
  await runVariantsBench({
    quick: argv.includes('--quick'),
    clock: argv.includes('--clock=cpu') ? 'cpu' : 'wall',
    only: argv
      .find((a) => a.startsWith('--only='))
      ?.slice(7)
      .split(','),
    outDir: resolve(
      argv.find((a) => a.startsWith('--out='))?.slice(6) ??
        fileURLToPath(new URL('./results', import.meta.url)),
    ),
  });
}
