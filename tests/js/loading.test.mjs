// The built module: real SIMD inside, and every way of locating the wasm.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

import { AttnScopeError, createAttnScope, hasRelaxedSimd } from 'attnscope';

import { rewriteRelaxedMadd } from '../../scripts/relaxed-simd-opcodes.mjs';
import { seed001 } from './support.mjs';

const require = createRequire(import.meta.url);
const wasmPath = fileURLToPath(import.meta.resolve('attnscope/attnscope.wasm'));
const relaxedWasmPath = fileURLToPath(import.meta.resolve('attnscope/attnscope-relaxed.wasm'));
// scripts/test.sh runs this suite twice: as is (Node 20: no relaxed SIMD) and
// with --experimental-wasm-relaxed-simd, so both branches below run.
const relaxed = hasRelaxedSimd();

function seedWorks(engine) {
  const w = engine.selfAttention(seed001).trace.weights.data[0];
  assert.ok(Math.abs(w - 0.6697615) < 1e-6, `weight ${w}`);
}

/** Counts of each f32x4 instruction in binaryen's disassembly. */
function countF32x4ByDisassembly(path) {
  const text = execFileSync('wasm-dis', [path], { maxBuffer: 256 * 2 ** 20 }).toString();
  return (text.match(/\bf32x4\.[a-z_]+/g) ?? []).reduce((counts, op) => {
    counts[op] = (counts[op] ?? 0) + 1;
    return counts;
  }, {});
}

test('the wasm really contains 128-bit SIMD f32x4 arithmetic', () => {
  const counts = countF32x4ByDisassembly(wasmPath);
  for (const op of ['f32x4.add', 'f32x4.mul'])
    assert.ok((counts[op] ?? 0) >= 10, `${op}: ${counts[op] ?? 0}`);
});

test('the wasm validates and has a linear memory', async () => {
  const bytes = await readFile(wasmPath);
  assert.ok(WebAssembly.validate(bytes));
  const module = await WebAssembly.compile(bytes);
  const imports = WebAssembly.Module.imports(module).map((i) => `${i.module}.${i.name}:${i.kind}`);
  const exports = WebAssembly.Module.exports(module).map((e) => `${e.name}:${e.kind}`);
  assert.ok(
    [...imports, ...exports].some((s) => s.endsWith(':memory')),
    'a memory is imported or exported',
  );
});

test('default: the Node entry reads attnscope.wasm next to the loader', async () => {
  seedWorks(await createAttnScope());
});

test('wasmBinary: bytes given directly (ArrayBuffer and Uint8Array)', async () => {
  const bytes = await readFile(wasmPath);
  seedWorks(await createAttnScope({ wasmBinary: new Uint8Array(bytes) }));
  seedWorks(
    await createAttnScope({
      wasmBinary: bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
    }),
  );
});

test('wasmUrl: a file URL, a URL object and a plain path', async () => {
  seedWorks(await createAttnScope({ wasmUrl: pathToFileURL(wasmPath).href }));
  seedWorks(await createAttnScope({ wasmUrl: pathToFileURL(wasmPath) }));
  seedWorks(await createAttnScope({ wasmUrl: wasmPath }));
});

test('locateFile: called with the file name', async () => {
  const asked = [];
  const engine = await createAttnScope({
    locateFile: (name, dir) => {
      asked.push([name, dir]);
      return wasmPath;
    },
  });
  seedWorks(engine);
  assert.equal(asked[0][0], relaxed ? 'attnscope-relaxed.wasm' : 'attnscope.wasm');
  assert.equal(engine.simdArch, 'sse2', 'the file locateFile returned is the one loaded');
});

test('hasRelaxedSimd agrees with WebAssembly.validate of the relaxed build', async () => {
  assert.equal(relaxed, WebAssembly.validate(await readFile(relaxedWasmPath)));
  assert.ok(WebAssembly.validate(await readFile(wasmPath)), 'the plain build validates everywhere');
});

test('the relaxed build holds f32x4.relaxed_madd in its final encoding, no prototype opcode', async () => {
  const { rewritten, final } = rewriteRelaxedMadd(await readFile(relaxedWasmPath), {
    dryRun: true,
  });
  assert.equal(rewritten, 0, 'prototype (0xfd 0xaf 0x01) madds left');
  assert.ok(final >= 50, `only ${final} relaxed madds`);
  const plain = rewriteRelaxedMadd(await readFile(wasmPath), { dryRun: true });
  assert.deepEqual([plain.rewritten, plain.final], [0, 0], 'the plain build has no relaxed SIMD');
});

test('simd option: "auto" picks the relaxed build exactly where the engine has relaxed SIMD', async () => {
  const expected = relaxed ? 'sse2+relaxed_madd' : 'sse2';
  // Among the single-thread builds (threads "auto" in Node picks the threaded one, simd128).
  assert.equal((await createAttnScope({ threads: 1 })).simdArch, expected);
  assert.equal((await createAttnScope({ simd: 'auto', threads: 1 })).simdArch, expected);
  const plain = await createAttnScope({ simd: 'simd128' });
  assert.equal(plain.simdArch, 'sse2');
  seedWorks(plain);
  if (relaxed) {
    const engine = await createAttnScope({ simd: 'relaxed' });
    assert.equal(engine.simdArch, 'sse2+relaxed_madd');
    seedWorks(engine);
  } else {
    await assert.rejects(createAttnScope({ simd: 'relaxed' }), (e) => {
      assert.ok(e instanceof AttnScopeError);
      assert.match(
        e.message,
        /simd "relaxed" needs relaxed SIMD, which this WebAssembly engine lacks/,
      );
      return true;
    });
  }
  await assert.rejects(
    createAttnScope({ simd: 'avx' }),
    /simd must be "auto", "simd128" or "relaxed", got "avx"/,
  );
});

test('the relaxed build is marked for its own loader, and pairs with it by every route', async () => {
  // scripts/mark-relaxed-loader.mjs: the relaxed loader may name the imports otherwise.
  const mark = 'attnscope.relaxed-loader';
  const relaxedBytes = await readFile(relaxedWasmPath);
  const tail = relaxedBytes.subarray(relaxedBytes.length - mark.length);
  assert.equal(new TextDecoder().decode(tail), mark, 'attnscope-relaxed.wasm ends with the mark');
  const plainBytes = await readFile(wasmPath);
  assert.ok(
    WebAssembly.Module.customSections(new WebAssembly.Module(plainBytes), mark).length === 0,
  );
  if (!relaxed) return; // the relaxed module cannot compile here (the relaxed pass runs it)
  assert.equal(
    WebAssembly.Module.customSections(new WebAssembly.Module(relaxedBytes), mark).length,
    1,
  );
  const relaxedUrl = pathToFileURL(relaxedWasmPath);
  for (const options of [
    { wasmBinary: relaxedBytes },
    { wasmUrl: relaxedUrl },
    { simd: 'simd128', locateFile: () => relaxedUrl.href },
  ]) {
    const engine = await createAttnScope({ threads: 1, ...options });
    assert.equal(engine.simdArch, 'sse2+relaxed_madd', Object.keys(options).join());
    seedWorks(engine);
    // Errors cross the glue's exception imports, which the two loaders may name apart.
    assert.throws(
      () => engine.attention({ q: [1, 2], k: [1, 2, 3], v: [1, 2], shape: [1, 2] }),
      AttnScopeError,
    );
    const model = engine.createModel({
      layers: 1,
      heads: 1,
      dModel: 8,
      vocabSize: 16,
      contextLength: 8,
      seed: 1,
    });
    const { loss } = model
      .trainer({ lr: 1e-3 })
      .step({ tokens: [1, 2, 3, 4, 5, 6], shape: [2, 3] });
    assert.ok(Number.isFinite(loss) && loss > 0, `loss ${loss}`);
    model.dispose();
    seedWorks(engine);
  }
});

test('a missing or corrupt wasm gives an AttnScopeError', async () => {
  await assert.rejects(createAttnScope({ wasmUrl: '/nonexistent/attnscope.wasm' }), (e) => {
    assert.ok(e instanceof AttnScopeError);
    assert.match(e.message, /could not read \/nonexistent\/attnscope.wasm/);
    return true;
  });
  await assert.rejects(
    createAttnScope({ wasmBinary: new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]) }),
    (e) => {
      assert.ok(e instanceof AttnScopeError, String(e));
      assert.match(
        e.message,
        /wasmBinary \(8 bytes\) is not a WebAssembly module .*expected version/,
      );
      return true;
    },
  );
});

test('engines are independent instances', async () => {
  const a = await createAttnScope();
  const b = await createAttnScope();
  a.attention({
    q: new Float32Array(1200 * 4),
    k: new Float32Array(1200 * 4),
    v: new Float32Array(1200 * 4),
    shape: [1200, 4],
  });
  assert.ok(a.memoryUsage().heapSize > b.memoryUsage().heapSize);
  seedWorks(b);
});

test(
  'require() of the package works too (Node ≥ 20.19 require(esm))',
  { skip: !process.features.require_module && 'this Node has no require(esm)' },
  () => {
    const m = require('attnscope');
    assert.equal(typeof m.createAttnScope, 'function');
  },
);
