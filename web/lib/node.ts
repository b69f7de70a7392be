// Entry for Node: reads the wasm (attnscope-relaxed.wasm or attnscope.wasm,
// see wasmFileFor) from disk and passes the bytes, since Node's fetch cannot
// load file:// URLs.
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';

import { AttnScopeError } from './errors.js';
import { chooseBuild, checkedOptions, instantiate, locate, type Platform } from './load.js';
import { NodeWebWorker } from './node-web-worker.js';
import type { AttnScope, CreateOptions } from './types.js';

export * from './index.js';

async function readWasm(location: string | URL): Promise<Uint8Array> {
  const text = String(location);
  if (/^https?:/.test(text)) {
    const response = await fetch(text);
    if (!response.ok) throw new Error(`HTTP ${response.status} for ${text}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  return readFile(text.startsWith('file:') ? new URL(text) : text);
}

/**
 * Loads the WebAssembly module and returns a ready engine. In Node the wasm is
 * read from disk: `wasmUrl` (a file URL, path or http(s) URL), `locateFile`,
 * or by default the file `options.simd` picks next to this module
 * (`attnscope-relaxed.wasm` where V8 has relaxed SIMD, else `attnscope.wasm`).
 *
 * @throws AttnScopeError when the wasm cannot be read or instantiated.
 */
export async function createAttnScope(options?: CreateOptions): Promise<AttnScope> {
  const checked = checkedOptions(options);
  const platform: Platform = {
    hardwareThreads: availableParallelism(),
    workerClass: NodeWebWorker,
  };
  if (checked.wasmBinary !== undefined) return instantiate(checked, undefined, platform);
  const here = new URL('./', import.meta.url);
  const { file, threads } = chooseBuild(checked, platform);
  let location: string | URL;
  const fromPackage = !(checked.locateFile === undefined && checked.wasmUrl !== undefined);
  if (!fromPackage) {
    location = checked.wasmUrl as string | URL;
  } else {
    location = checked.locateFile ? locate(checked, file, here.href) : new URL(file, here);
  }
  let wasmBinary: Uint8Array;
  try {
    wasmBinary = await readWasm(location);
  } catch (e) {
    throw new AttnScopeError(
      `createAttnScope: could not read ${String(location)} (${e instanceof Error ? e.message : String(e)})`,
      { cause: e },
    );
  }
  // The bytes of the chosen build, with the thread count already resolved.
  const { wasmUrl: _wasmUrl, ...rest } = checked;
  return instantiate(
    { ...rest, wasmBinary, threads },
    String(location),
    platform,
    fromPackage ? file : undefined,
  );
}
