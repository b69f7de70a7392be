// Loading failures are AttnScopeErrors that name the argument, the file or
// the bytes and the real cause, and the Emscripten glue prints nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { AttnScopeError, createAttnScope } from 'attnscope';

async function rejectsWith(promise, pattern) {
  await assert.rejects(promise, (e) => {
    assert.ok(e instanceof AttnScopeError, `${e?.name}: ${e?.message}`);
    assert.match(e.message, pattern);
    return true;
  });
}

// (module (import "env" "missing" (func))): valid WebAssembly the glue cannot link.
const kForeignModule = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x04, 0x01, 0x60, 0x00, 0x00, 0x02, 0x0f,
  0x01, 0x03, 0x65, 0x6e, 0x76, 0x07, 0x6d, 0x69, 0x73, 0x73, 0x69, 0x6e, 0x67, 0x00, 0x00,
]);

test('createAttnScope refuses options that are not an object, naming them', async () => {
  await rejectsWith(createAttnScope(null), /createAttnScope: options must be an object, got null/);
  await rejectsWith(
    createAttnScope('fast'),
    /createAttnScope: options must be an object, got string/,
  );
  await rejectsWith(
    createAttnScope({ wasmBinary: 'bytes' }),
    /createAttnScope: wasmBinary must be an ArrayBuffer or a Uint8Array, got string/,
  );
  await rejectsWith(
    createAttnScope({ wasmUrl: 42 }),
    /createAttnScope: wasmUrl must be a string or a URL, got number/,
  );
  await rejectsWith(
    createAttnScope({ locateFile: 'here' }),
    /createAttnScope: locateFile must be a function, got string/,
  );
});

test('a throwing or odd locateFile is reported as such', async () => {
  await rejectsWith(
    createAttnScope({
      locateFile: () => {
        throw new Error('no such place');
      },
    }),
    /createAttnScope: locateFile threw while resolving attnscope(-relaxed)?\.wasm: no such place/,
  );
  await rejectsWith(
    createAttnScope({ locateFile: () => null }),
    /locateFile must return a URL string for attnscope(-relaxed)?\.wasm, got null/,
  );
});

test('bad wasm bytes and files say which and why', async () => {
  await rejectsWith(
    createAttnScope({ wasmBinary: new Uint8Array([60, 33, 100, 111]) }),
    /createAttnScope: wasmBinary \(4 bytes\) is not a WebAssembly module this engine can compile: .*magic word/,
  );
  await rejectsWith(
    createAttnScope({ wasmBinary: kForeignModule }),
    /createAttnScope: could not instantiate wasmBinary: .*env/,
  );
  const notWasm = fileURLToPath(new URL('../../package.json', import.meta.url));
  await rejectsWith(
    createAttnScope({ wasmUrl: notWasm }),
    new RegExp(
      `createAttnScope: ${notWasm.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} \\(\\d+ bytes\\) is not a WebAssembly module`,
    ),
  );
});

test('a failed load prints nothing (no "Aborted(...)" from the glue)', () => {
  const script = `
    import { createAttnScope } from 'attnscope';
    for (const wasmBinary of [new Uint8Array([0, 97, 115, 109, 9, 9, 9, 9]), new Uint8Array(${JSON.stringify([...kForeignModule])})]) {
      try { await createAttnScope({ wasmBinary }); } catch (e) { if (e.name !== 'AttnScopeError') throw e; }
    }`;
  const run = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: fileURLToPath(new URL('.', import.meta.url)),
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stderr, '');
  assert.equal(run.stdout, '');
});
