// Instantiating the Emscripten module and wrapping it in the engine.
import createAttnModule, { type AttnModuleOptions } from './attnscope.mjs';
import { createEngine } from './engine.js';
import { AttnScopeError } from './errors.js';
import {
  browserHardwareThreads,
  kThreadsGlueFileName,
  kThreadsRelaxedGlueFileName,
  kThreadsRelaxedWasmFileName,
  kThreadsWasmFileName,
  kThreadsWorkerFileName,
  resolveThreads,
} from './threads.js';
import type { AttnScope, CreateOptions, SimdFlavour } from './types.js';

/** The plain SIMD (simd128) module's file name, resolved next to the loader unless overridden. */
export const kWasmFileName = 'attnscope.wasm';
/** The relaxed-SIMD build of the same module (same glue, same exports). */
export const kRelaxedWasmFileName = 'attnscope-relaxed.wasm';
/** The custom section that marks the single-thread relaxed build (scripts/mark-relaxed-loader.mjs). */
export const kRelaxedLoaderSection = 'attnscope.relaxed-loader';

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
    throw new AttnScopeError(
      `createAttnScope: simd must be "auto", "simd128" or "relaxed", got ${JSON.stringify(simd)}`,
    );
  }
  if (simd === 'relaxed' && !hasRelaxedSimd()) {
    throw new AttnScopeError(
      'createAttnScope: simd "relaxed" needs relaxed SIMD, which this WebAssembly engine lacks (use "auto" or "simd128")',
    );
  }
  return simd === 'relaxed' || (simd === 'auto' && hasRelaxedSimd())
    ? kRelaxedWasmFileName
    : kWasmFileName;
}

/**
 * The default URL of `file` next to this module. Each name is written out in
 * a literal new URL(..., import.meta.url) so that bundlers emit both files.
 */
export function defaultWasmUrl(file: string): URL {
  if (file === kThreadsWasmFileName) return new URL('./attnscope-threads.wasm', import.meta.url);
  if (file === kThreadsRelaxedWasmFileName) {
    return new URL('./attnscope-threads-relaxed.wasm', import.meta.url);
  }
  if (file === kThreadsWorkerFileName) {
    return new URL('./attnscope-threads.worker.js', import.meta.url);
  }
  if (file === kThreadsGlueFileName) return new URL('./attnscope-threads.mjs', import.meta.url);
  if (file === kThreadsRelaxedGlueFileName) {
    return new URL('./attnscope-threads-relaxed.mjs', import.meta.url);
  }
  return file === kRelaxedWasmFileName
    ? new URL('./attnscope-relaxed.wasm', import.meta.url)
    : new URL('./attnscope.wasm', import.meta.url);
}

/** Where this context runs: its hardware threads, and (Node) the Worker class for pthreads. */
export interface Platform {
  hardwareThreads: number;
  workerClass?: new (url: string) => unknown;
}

/** The build to load and its thread count, from the simd and threads options. */
export function chooseBuild(
  checked: CreateOptions,
  platform: Platform,
): { file: string; threads: number } {
  const explicitWasm =
    checked.wasmBinary !== undefined ||
    checked.wasmUrl !== undefined ||
    checked.locateFile !== undefined;
  const threads = resolveThreads(checked.threads, platform.hardwareThreads, explicitWasm);
  const file = wasmFileFor(checked.simd);
  if (threads > 1) {
    const relaxed = file === kRelaxedWasmFileName;
    return { file: relaxed ? kThreadsRelaxedWasmFileName : kThreadsWasmFileName, threads };
  }
  return { file, threads };
}

/** The URL of one of the package's files: through locateFile when given, else beside this module. */
export function fileUrl(options: CreateOptions, file: string): string {
  return options.locateFile
    ? locate(options, file, new URL('./', import.meta.url).href)
    : defaultWasmUrl(file).href;
}

/** Throws an AttnScopeError for createAttnScope. */
function loadFailure(message: string, cause?: unknown): never {
  throw new AttnScopeError(
    `createAttnScope: ${message}`,
    cause === undefined ? undefined : { cause },
  );
}

function reason(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** The caller's options as own properties only; anything but an object (or nothing) is refused. */
export function checkedOptions(options: unknown): CreateOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    loadFailure(
      `options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}`,
    );
  }
  const own = (key: keyof CreateOptions): unknown =>
    Object.prototype.hasOwnProperty.call(options, key)
      ? (options as Record<string, unknown>)[key]
      : undefined;
  const checked: CreateOptions = {};
  const wasmBinary = own('wasmBinary');
  if (wasmBinary !== undefined) {
    if (!(wasmBinary instanceof ArrayBuffer) && !ArrayBuffer.isView(wasmBinary)) {
      loadFailure(
        `wasmBinary must be an ArrayBuffer or a Uint8Array, got ${wasmBinary === null ? 'null' : typeof wasmBinary}`,
      );
    }
    checked.wasmBinary = wasmBinary as ArrayBuffer | Uint8Array;
  }
  const wasmUrl = own('wasmUrl');
  if (wasmUrl !== undefined) {
    if (typeof wasmUrl !== 'string' && !(wasmUrl instanceof URL)) {
      loadFailure(
        `wasmUrl must be a string or a URL, got ${wasmUrl === null ? 'null' : typeof wasmUrl}`,
      );
    }
    checked.wasmUrl = wasmUrl;
  }
  const locateFile = own('locateFile');
  if (locateFile !== undefined) {
    if (typeof locateFile !== 'function')
      loadFailure(`locateFile must be a function, got ${typeof locateFile}`);
    checked.locateFile = locateFile as CreateOptions['locateFile'];
  }
  const simd = own('simd');
  if (simd !== undefined) checked.simd = simd as CreateOptions['simd'];
  const threads = own('threads');
  if (threads !== undefined) checked.threads = threads as CreateOptions['threads'];
  return checked;
}

/** The caller's locateFile, its exceptions and its non-string answers reported as such. */
export function locate(options: CreateOptions, file: string, directory: string): string {
  let url: unknown;
  try {
    url = options.locateFile!(file, directory);
  } catch (e) {
    loadFailure(`locateFile threw while resolving ${file}: ${reason(e)}`, e);
  }
  if (typeof url !== 'string' && !(url instanceof URL)) {
    loadFailure(
      `locateFile must return a URL string for ${file}, got ${url === null ? 'null' : typeof url}`,
    );
  }
  return String(url);
}

/** Compiles the module's bytes, naming what they came from when they are not valid WebAssembly. */
async function compile(
  bytes: ArrayBuffer | ArrayBufferView,
  what: string,
): Promise<WebAssembly.Module> {
  try {
    return await WebAssembly.compile(bytes as BufferSource);
  } catch (e) {
    const size = bytes.byteLength;
    loadFailure(
      `${what} (${size} bytes) is not a WebAssembly module this engine can compile: ${reason(e)}`,
      e,
    );
  }
}

async function download(url: string): Promise<ArrayBuffer> {
  let response: Response;
  try {
    response = await fetch(url, { credentials: 'same-origin' });
  } catch (e) {
    loadFailure(`could not fetch ${url}: ${reason(e)}`, e);
  }
  if (!response.ok)
    loadFailure(`could not fetch ${url}: HTTP ${response.status} ${response.statusText}`.trimEnd());
  return response.arrayBuffer();
}

/** How to run the threaded build: its thread count and where its files are. */
export interface ThreadedRun {
  threads: number;
  /** Whether the bytes are the relaxed-SIMD threaded build (which has its own glue). */
  relaxed: boolean;
  glueUrl: string;
  workerUrl: string;
  workerClass?: new (url: string) => unknown;
}

/**
 * Instantiates the glue on a module compiled here, so that every failure is
 * an AttnScopeError naming the file or bytes and the cause, and the glue has
 * nothing to abort on (its print, printErr and onAbort go nowhere else).
 * With `threaded`, the threaded build's glue starts `threads` pthread
 * workers before it is ready (the core's pool threads for `threads` CPUs),
 * and the core's pool is set to `threads`.
 */
export async function instantiateCompiled(
  module: WebAssembly.Module,
  what: string,
  threaded?: ThreadedRun,
): Promise<AttnScope> {
  let fail: (e: unknown) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  const moduleOptions: AttnModuleOptions = {
    instantiateWasm: (imports, receive) => {
      WebAssembly.instantiate(module, imports).then((instance) => receive(instance, module), fail);
      return {};
    },
    print: () => {},
    printErr: () => {},
    onAbort: (why) => fail(new Error(String(why))),
  };
  let raw;
  try {
    if (threaded) {
      // Each glue is named in a literal import so that bundlers emit both.
      const { default: createThreaded } = threaded.relaxed
        ? await import('./attnscope-threads-relaxed.mjs')
        : await import('./attnscope-threads.mjs');
      raw = await Promise.race([
        createThreaded({
          ...moduleOptions,
          // set_threads(n) starts n pool threads (cpp/src/thread_pool.cpp).
          attnscopeWorkers: threaded.threads,
          mainScriptUrlOrBlob: threaded.glueUrl,
          locateFile: (file) => (file.endsWith('.worker.js') ? threaded.workerUrl : file),
          ...(threaded.workerClass ? { attnscopeWorker: threaded.workerClass } : {}),
        }),
        failed,
      ]);
    } else {
      // The relaxed build's loader may name the imports otherwise than the plain one's
      // (scripts/mark-relaxed-loader.mjs): the module's mark says which it needs,
      // whichever route its bytes took.
      const create = WebAssembly.Module.customSections(module, kRelaxedLoaderSection).length
        ? (await import('./attnscope-relaxed.mjs')).default
        : createAttnModule;
      raw = await Promise.race([create(moduleOptions), failed]);
    }
  } catch (e) {
    loadFailure(`could not instantiate ${what}: ${reason(e)}`, e);
  }
  if (threaded) {
    const refused = raw._set_threads(threaded.threads);
    if (refused) loadFailure(`could not start ${threaded.threads} threads: ${refused}`);
  }
  return createEngine(raw);
}

/** The threaded run for `threads` threads (undefined for 1), its files found as `options` says. */
export function threadedRun(
  options: CreateOptions,
  threads: number,
  platform: Platform,
  relaxed: boolean,
): ThreadedRun | undefined {
  if (threads <= 1) return undefined;
  return {
    threads,
    relaxed,
    glueUrl: fileUrl(options, relaxed ? kThreadsRelaxedGlueFileName : kThreadsGlueFileName),
    workerUrl: fileUrl(options, kThreadsWorkerFileName),
    ...(platform.workerClass ? { workerClass: platform.workerClass } : {}),
  };
}

/**
 * Loads the wasm as described by `options` (browser and worker: fetched; Node
 * passes wasmBinary, read from `packageFile` when it is one of the package's
 * files). Each threaded build needs its own glue: bytes the caller gives
 * (wasmBinary, wasmUrl) get the relaxed build's only with simd "relaxed",
 * since the bytes cannot tell.
 */
export async function instantiate(
  options: unknown,
  what?: string,
  platform: Platform = { hardwareThreads: browserHardwareThreads() },
  packageFile?: string,
): Promise<AttnScope> {
  const checked = checkedOptions(options);
  const { file, threads } = chooseBuild(checked, platform);
  const callerBytes =
    checked.wasmBinary !== undefined ||
    (checked.wasmUrl !== undefined && checked.locateFile === undefined);
  const relaxed =
    packageFile !== undefined
      ? packageFile === kThreadsRelaxedWasmFileName
      : callerBytes
        ? checked.simd === 'relaxed'
        : file === kThreadsRelaxedWasmFileName;
  const threaded = threadedRun(checked, threads, platform, relaxed);
  if (checked.wasmBinary !== undefined) {
    const label = what ?? 'wasmBinary';
    return instantiateCompiled(await compile(checked.wasmBinary, label), label, threaded);
  }
  const url =
    checked.locateFile === undefined && checked.wasmUrl !== undefined
      ? String(checked.wasmUrl)
      : fileUrl(checked, file);
  return instantiateCompiled(await compile(await download(url), url), url, threaded);
}
