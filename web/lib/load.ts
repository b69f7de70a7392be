// Instantiating the Emscripten module and wrapping it in the engine.
import createAttnModule, { type AttnModuleOptions } from './attnscope.mjs';
import { createEngine } from './engine.js';
import { AttnScopeError } from './errors.js';
import type { AttnScope, CreateOptions, SimdFlavour } from './types.js';

/** The plain SIMD (simd128) module's file name, resolved next to the loader unless overridden. */
export const kWasmFileName = 'attnscope.wasm';
/** The relaxed-SIMD build of the same module (same glue, same exports). */
export const kRelaxedWasmFileName = 'attnscope-relaxed.wasm';

// (func (param v128) (result v128) local.get 0 local.get 0 local.get 0 f32x4.relaxed_madd);
// scripts/relaxed-simd-opcodes.mjs, which runs before the package is built, holds the same bytes.
// prettier-ignore
const kRelaxedProbe = Uint8Array.from([
  0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00, 0x01, 0x06, 0x01, 0x60, 0x01, 0x7b, 0x01, 0x7b,
  0x03, 0x02, 0x01, 0x00, 0x0a, 0x0d, 0x01, 0x0b, 0x00, 0x20, 0x00, 0x20, 0x00, 0x20, 0x00, 0xfd,
  0x85, 0x02, 0x0b,
]);

/** Whether this engine runs relaxed SIMD (checked once, by validating a tiny module). */
export function hasRelaxedSimd(): boolean {
  try {
    return WebAssembly.validate(kRelaxedProbe);
  } catch {
    return false;
  }
}

/** The file to load for `simd` ("auto": the relaxed build where the engine has relaxed SIMD). */
export function wasmFileFor(simd: SimdFlavour = 'auto'): string {
  if (simd !== 'auto' && simd !== 'simd128' && simd !== 'relaxed') {
    throw new AttnScopeError(`createAttnScope: simd must be "auto", "simd128" or "relaxed", got ${JSON.stringify(simd)}`);
  }
  if (simd === 'relaxed' && !hasRelaxedSimd()) {
    throw new AttnScopeError(
      'createAttnScope: simd "relaxed" needs relaxed SIMD, which this WebAssembly engine lacks (use "auto" or "simd128")',
    );
  }
  return simd === 'relaxed' || (simd === 'auto' && hasRelaxedSimd()) ? kRelaxedWasmFileName : kWasmFileName;
}

/**
 * The default URL of `file` next to this module. Each name is written out in
 * a literal new URL(..., import.meta.url) so that bundlers emit both files.
 */
export function defaultWasmUrl(file: string): URL {
  return file === kRelaxedWasmFileName
    ? new URL('./attnscope-relaxed.wasm', import.meta.url)
    : new URL('./attnscope.wasm', import.meta.url);
}

/** Loads the wasm as described by `options` (already environment-specific). */
export async function instantiate(options: CreateOptions): Promise<AttnScope> {
  const moduleOptions: AttnModuleOptions = {};
  let file = kWasmFileName;
  if (options.wasmBinary !== undefined) {
    moduleOptions.wasmBinary = options.wasmBinary;
  } else if (options.locateFile === undefined && options.wasmUrl !== undefined) {
    const url = String(options.wasmUrl);
    file = url;
    moduleOptions.locateFile = (path, dir) => (path.endsWith('.wasm') ? url : dir + path);
  } else {
    file = wasmFileFor(options.simd);
    const locate = options.locateFile;
    moduleOptions.locateFile = (path, dir) => {
      if (!path.endsWith('.wasm')) return dir + path;
      return locate ? locate(file, dir) : defaultWasmUrl(file).href;
    };
  }
  let raw;
  try {
    raw = await createAttnModule(moduleOptions);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw new AttnScopeError(`createAttnScope: could not load ${file} (${reason})`);
  }
  return createEngine(raw);
}
