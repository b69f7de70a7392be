// Instantiating the Emscripten module and wrapping it in the engine.
import createAttnModule, { type AttnModuleOptions } from './attnscope.mjs';
import { createEngine } from './engine.js';
import { AttnScopeError } from './errors.js';
import type { AttnScope, CreateOptions } from './types.js';

/** The module's file name, resolved next to the loader unless overridden. */
export const kWasmFileName = 'attnscope.wasm';

/** Loads the wasm as described by `options` (already environment-specific). */
export async function instantiate(options: CreateOptions): Promise<AttnScope> {
  const moduleOptions: AttnModuleOptions = {};
  if (options.wasmBinary !== undefined) {
    moduleOptions.wasmBinary = options.wasmBinary;
  } else if (options.locateFile !== undefined) {
    moduleOptions.locateFile = options.locateFile;
  } else if (options.wasmUrl !== undefined) {
    const url = String(options.wasmUrl);
    moduleOptions.locateFile = (path, dir) => (path.endsWith('.wasm') ? url : dir + path);
  }
  let raw;
  try {
    raw = await createAttnModule(moduleOptions);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new AttnScopeError(`createAttnScope: could not load ${kWasmFileName} (${reason})`);
  }
  return createEngine(raw);
}
