// API soak: many calls of every kind with varied shapes, masks and paths (and a
// share of rejected calls) must leave the wasm heap flat.
//   node --expose-gc tests/soak/api-soak.mjs [--calls=100000] [--seed=1]
// Prints the heap before/after and calls/s; exits 1 if the heap grew.
import assert from 'node:assert/strict';

import { AttnScopeError, createAttnScope } from 'attnscope';
import { mulberry32 } from 'attnscope/reference';

const arg = (name, fallback) =>
  Number(process.argv.find((a) => a.startsWith(`--${name}=`))?.split('=')[1] ?? fallback);
const kCalls = arg('calls', 100_000);
// Reproducible shapes for a given --seed.
const random = mulberry32(arg('seed', 1));
const int = (lo, hi) => lo + Math.floor(random() * (hi - lo + 1));
const floats = (n) => Float32Array.from({ length: n }, () => random() * 2 - 1);
const pick = (xs) => xs[int(0, xs.length - 1)];

function maskFor(B, H, T) {
  switch (int(0, 5)) {
    case 0:
      return 'none';
    case 1:
      return 'causal';
    case 2:
      return { lengths: Array.from({ length: B }, () => int(0, T)) };
    case 3:
      return {
        causal: true,
        additive: Float32Array.from({ length: T * T }, () =>
          random() < 0.2 ? -Infinity : random(),
        ),
        additiveShape: [T, T],
      };
    case 4:
      return {
        allowed: Uint8Array.from({ length: B * T * T }, () => (random() < 0.7 ? 1 : 0)),
        allowedShape: [B, T, T],
      };
    default:
      return {
        allowed: Uint8Array.from({ length: B * H * T * T }, () => (random() < 0.7 ? 1 : 0)),
        allowedShape: [B, H, T, T],
        lengths: Array.from({ length: B }, () => int(1, T)),
      };
  }
}

/**
 * Inputs that are not what they claim, or JavaScript that throws part-way
 * through a call (the copy out included): when `bad`, one of them, which must
 * be rejected and leave nothing allocated; else a call with a lying but
 * harmless `length`, which must work.
 */
function hostileCall(engine, T, d, bad) {
  const n = T * d;
  const lying = (array, length) => Object.defineProperty(array, 'length', { value: length });
  const args = { q: floats(n), k: floats(n), v: floats(n), shape: [T, d], trace: random() < 0.5 };
  if (!bad)
    return engine.attention({
      ...args,
      v: lying(floats(n), int(0, 2 * n)),
      out: lying(new Float32Array(n), n + 1),
    });
  switch (int(0, 4)) {
    case 0:
      return engine.attention({ ...args, dv: d, v: lying(floats(n + int(1, n)), n) });
    case 1:
      return engine.attention({
        ...args,
        get mask() {
          throw new Error('getter');
        },
      });
    case 2:
      return engine.attention({ ...args, shape: [2 ** 32 + T, d] });
    case 3:
      return engine.attention({ ...args, q: floats(n), mask: { lengths: [1n] } });
    default: {
      const slice = Float32Array.prototype.slice;
      Float32Array.prototype.slice = () => {
        throw new RangeError('Array buffer allocation failed');
      };
      try {
        return engine.attention(args);
      } finally {
        Float32Array.prototype.slice = slice;
      }
    }
  }
}

/** One call of a random kind; about 1 in 10 is malformed and must be rejected. */
function oneCall(engine) {
  const B = int(1, 3),
    T = int(1, 40),
    H = pick([1, 2, 4]),
    d = int(1, 8),
    C = int(1, 24);
  const trace = random() < 0.5;
  const bad = random() < 0.1;
  const kind = int(0, 8);
  const call = () => {
    switch (kind) {
      case 0: {
        const w = () => floats(C * H * d);
        return engine.selfAttention({
          x: floats(B * T * C),
          shape: [B, T, bad ? C + 1 : C],
          wq: w(),
          wk: w(),
          wv: w(),
          wo: random() < 0.5 ? floats(H * d * C) : undefined,
          heads: H,
          mask: maskFor(B, H, T),
          trace,
        });
      }
      case 1: {
        const shape = pick([
          [B, H, T, d],
          [H, T, d],
          [T, d],
        ]);
        const n = shape.reduce((a, b) => a * b, 1);
        const mask = shape.length === 4 ? maskFor(B, H, T) : pick(['none', 'causal']);
        return engine.attention({
          q: floats(bad ? n + 1 : n),
          k: floats(n),
          v: floats(n),
          shape,
          mask,
          trace,
          scale: pick([true, false, 0.5]),
        });
      }
      case 2: {
        const hidden = int(1, 32);
        const att = {
          wq: floats(C * H * d),
          wk: floats(C * H * d),
          wv: floats(C * H * d),
          wo: floats(H * d * C),
          heads: H,
        };
        return engine.transformerBlock({
          x: floats(B * T * C),
          shape: [B, T, C],
          attention: att,
          ff1: { weight: floats(C * hidden) },
          ff2: { weight: floats(hidden * (bad ? C + 1 : C)) },
          hidden,
          normFirst: random() < 0.5,
          activation: pick(['relu', 'gelu']),
          mask: maskFor(B, H, T),
          trace,
        });
      }
      case 3:
        return engine.layerNorm({ x: floats(B * T * C), shape: [B, T, C], eps: bad ? 0 : 1e-5 });
      case 4:
        return engine.linear({
          x: floats(T * C),
          shape: [T, C],
          weight: floats(C * d),
          outDim: bad ? d + 1 : d,
        });
      case 5: {
        const hidden = int(1, 32);
        return engine.feedForward({
          x: floats(T * C),
          shape: [T, C],
          w1: floats(C * hidden),
          w2: floats(hidden * C),
          hidden,
          activation: pick(['relu', 'gelu']),
          b1: bad ? floats(hidden + 1) : undefined,
        });
      }
      case 6:
        return engine.residualAdd({
          a: floats(T * C),
          b: floats(bad ? T * C + 1 : T * C),
          shape: [T, C],
        });
      case 7:
        return engine.positionalEncoding({ length: bad ? 0 : T, dim: C });
      default:
        return hostileCall(engine, T, d, bad);
    }
  };
  try {
    call();
    return bad ? `accepted-bad (kind ${kind})` : 'ok';
  } catch (e) {
    if (!(e instanceof AttnScopeError)) throw e;
    return bad ? 'rejected' : `rejected-good: ${e.message}`;
  }
}

const engine = await createAttnScope();
const gc = globalThis.gc ?? (() => {});
const counts = {};
const runCalls = (n) => {
  for (let i = 0; i < n; i++) {
    const r = oneCall(engine);
    const key = r.split(/[:( ]/)[0];
    counts[key] = (counts[key] ?? 0) + 1;
    if (key !== 'ok' && key !== 'rejected' && counts[key] <= 3) console.log(`# unexpected: ${r}`);
  }
};

runCalls(1000); // warm-up: the heap reaches its working size
for (const k of Object.keys(counts)) if (k === 'ok' || k === 'rejected') delete counts[k];
gc();
const before = engine.memoryUsage();
const jsBefore = process.memoryUsage().heapUsed;
const t0 = performance.now();
runCalls(kCalls / 2);
const middle = engine.memoryUsage();
runCalls(kCalls - kCalls / 2);
const seconds = (performance.now() - t0) / 1000;
gc();
const afterUse = engine.memoryUsage();
const jsAfter = process.memoryUsage().heapUsed;

const mb = (b) => `${(b / 2 ** 20).toFixed(2)} MiB`;
console.log(
  `# api soak: ${kCalls} calls in ${seconds.toFixed(1)} s = ${Math.round(kCalls / seconds)} calls/s; outcomes ${JSON.stringify(counts)}`,
);
console.log(
  `# wasm heap in use: before ${before.heapInUse} B, after ${afterUse.heapInUse} B (${afterUse.heapInUse - before.heapInUse >= 0 ? '+' : ''}${afterUse.heapInUse - before.heapInUse} B)`,
);
console.log(
  `# wasm memory size: before ${mb(before.heapSize)}, at half-time ${mb(middle.heapSize)}, after ${mb(afterUse.heapSize)}`,
);
console.log(
  `# JS heap used: before ${mb(jsBefore)}, after ${mb(jsAfter)}${globalThis.gc ? '' : ' (run with --expose-gc for a collected figure)'}`,
);

assert.equal(counts['accepted-bad'] ?? 0, 0, 'a malformed call was accepted');
assert.equal(counts['rejected-good'] ?? 0, 0, 'a well-formed call was rejected');
assert.equal(afterUse.heapInUse, before.heapInUse, 'wasm heap in use changed: something leaked');
assert.equal(afterUse.heapSize, middle.heapSize, 'wasm memory kept growing in the second half');
console.log('# api soak: heap flat');
