// attnscope's attention variants on the fast path (trace: false), one thread,
// through the package's public API:
//   GQA  H = 32, Hkv = 8, d = 128, T = 1024, causal, against MHA (Hkv = 32): time per query head,
//        and against onnxruntime-web's com.microsoft GroupQueryAttention on the same inputs
//   a decode step  Tq = 1, Tk = 4096, H = 32, Hkv = 8, d = 128: µs per step, and K/V bytes read per
//        µs against the machine's memory copy bandwidth (TypedArray.set within a WebAssembly.Memory)
//   a sliding window  W = 512 at T = 16 384, causal (H = 1, d = 64), against full causal
//   RoPE and ALiBi at T = 1024 (H = 8, d = 64, causal), against plain attention
// Each package call also copies its inputs into wasm memory: for the decode step that is the whole
// KV cache, so its bytes per µs count K and V once although the call moves them twice.
//
//   node --expose-gc web/bench/variants-bench.mjs [--quick] [--clock=cpu] [--out=dir]
// Run by attention-bench.mjs (npm run bench) after its own tables; writes <out>/variants.json.
import { mkdirSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cpuMs, gaussian } from './inputs.mjs';
import { loadAttnScope } from './attnscope-runner.mjs';
import { createOrtGroupQueryAttention } from './ort-runner.mjs';
import { createCoreDecode, loadCoreProbe } from './core-probe.mjs';

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
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

/** A fast-path attention call on (1, H, Tq, d) queries and (1, Hkv, Tk, d) keys and values. */
function attentionCall(engine, { H, Hkv, Tq, Tk, d }, options = {}) {
  const args = attentionArgs({ H, Hkv, Tq, Tk, d }, options);
  return () => engine.attention(args);
}

/** The arguments attentionCall passes (seeded inputs, so peers can get the same). */
function attentionArgs({ H, Hkv, Tq, Tk, d }, options = {}) {
  return {
    q: gaussian(H * Tq * d, 1),
    k: gaussian(Hkv * Tk * d, 2),
    v: gaussian(Hkv * Tk * d, 3),
    shape: [1, H, Tq, d],
    kvShape: [1, Hkv, Tk, d],
    mask: 'causal',
    trace: false,
    out: new Float32Array(H * Tq * d),
    ...options,
  };
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

/** Bytes per µs of copying 64 MiB within wasm memory (TypedArray.set is a memmove in V8). */
function copyBandwidth(clock) {
  const bytes = 64 * 2 ** 20;
  const memory = new WebAssembly.Memory({ initial: (2 * bytes) / 65536 });
  const from = new Float32Array(memory.buffer, 0, bytes / 4).fill(1);
  const to = new Float32Array(memory.buffer, bytes, bytes / 4);
  const ms = time(() => to.set(from), 9, clock);
  return bytes / (ms * 1000);
}

export async function runVariantsBench({ quick = false, clock = 'wall', outDir } = {}) {
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
  const gqaMs = time(attentionCall(engine, gqa), reps, clock);
  const mhaMs = time(attentionCall(engine, { ...gqa, Hkv: 32 }), reps, clock);
  result.gqa = {
    ...gqa,
    mask: 'causal',
    gqaMs,
    mhaMs,
    msPerQueryHead: gqaMs / 32,
    mhaMsPerQueryHead: mhaMs / 32,
    speedupOverMha: mhaMs / gqaMs,
  };
  result.gqa.met = mhaMs / gqaMs >= 1;
  console.log(
    `  GQA H=32 Hkv=8 d=128 T=${T} causal: ${fmt(gqaMs)} ms (${fmt((1000 * gqaMs) / 32, 0)} µs per query head); ` +
      `MHA (Hkv=32) ${fmt(mhaMs)} ms: GQA ${fmt(mhaMs / gqaMs)}× per query head`,
  );
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

  const decode = { H: 32, Hkv: 8, Tq: 1, Tk: 4096, d: 128 };
  const stepMs = time(attentionCall(engine, decode), quick ? 9 : 41, clock);
  const kvBytes = 2 * decode.Hkv * decode.Tk * decode.d * 4;
  const bytesPerUs = kvBytes / (stepMs * 1000);
  const copy = copyBandwidth(clock);
  result.decode = {
    ...decode,
    usPerStep: stepMs * 1000,
    kvBytes,
    kvBytesPerUs: bytesPerUs,
    copyBytesPerUs: copy,
    fractionOfCopy: bytesPerUs / copy,
  };
  result.decode.met = bytesPerUs / copy >= 0.5;
  console.log(
    `  decode step Tq=1 Tk=4096 H=32 Hkv=8 d=128: ${fmt(stepMs * 1000, 0)} µs per step; K/V ${fmt(kvBytes / 2 ** 20, 1)} MiB, ` +
      `${fmt(bytesPerUs, 0)} B/µs = ${fmt((100 * bytesPerUs) / copy, 0)}% of memory copy (${fmt(copy, 0)} B/µs)`,
  );
  // The same step in the core alone (web/bench/core-probe.cpp), its cache
  // already in wasm memory as a model's is: the read the kernel itself makes.
  if (await loadCoreProbe()) {
    const core = await createCoreDecode(decode);
    const coreMs = await timeAsync(() => core.run(), quick ? 9 : 41, clock);
    const coreBytesPerUs = kvBytes / (coreMs * 1000);
    Object.assign(result.decode, {
      coreUsPerStep: coreMs * 1000,
      coreKvBytesPerUs: coreBytesPerUs,
      coreFractionOfCopy: coreBytesPerUs / copy,
    });
    result.decode.coreMet = coreBytesPerUs / copy >= 0.5;
    console.log(
      `    the core alone (cache in wasm memory, no copy in): ${fmt(coreMs * 1000, 0)} µs per step, ` +
        `${fmt(coreBytesPerUs, 0)} B/µs = ${fmt((100 * coreBytesPerUs) / copy, 0)}% of memory copy`,
    );
  }

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

  const small = { H: 8, Hkv: 8, Tq: T, Tk: T, d: 64 };
  const plainMs = time(attentionCall(engine, small), reps * 2, clock);
  const ropeMs = time(attentionCall(engine, small, { rope: {} }), reps * 2, clock);
  const alibiMs = time(attentionCall(engine, small, { bias: 'alibi' }), reps * 2, clock);
  result.positions = {
    ...small,
    mask: 'causal',
    plainMs,
    ropeMs,
    alibiMs,
    ropeOverhead: ropeMs / plainMs - 1,
    alibiOverhead: alibiMs / plainMs - 1,
  };
  result.positions.met = ropeMs / plainMs <= 1.1 && alibiMs / plainMs <= 1.1;
  console.log(
    `  T=${T} H=8 d=64 causal: plain ${fmt(plainMs)} ms, RoPE ${fmt(ropeMs)} ms (+${fmt(100 * (ropeMs / plainMs - 1), 0)}%), ` +
      `ALiBi ${fmt(alibiMs)} ms (+${fmt(100 * (alibiMs / plainMs - 1), 0)}%)`,
  );

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
    outDir: resolve(
      argv.find((a) => a.startsWith('--out='))?.slice(6) ??
        fileURLToPath(new URL('./results', import.meta.url)),
    ),
  });
}
