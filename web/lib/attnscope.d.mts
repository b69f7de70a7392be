// Declarations for the Emscripten-generated loader (attnscope.mjs). Emscripten
// 3.1.6 cannot emit them, so they are written by hand; the raw functions are
// those bound in cpp/bindings/embind.cpp. Internal: the package's public API
// is in index.d.ts.

/** A tensor as passed across the boundary: flat row-major data and its shape. */
export interface RawTensor {
  data: Float32Array;
  shape: number[];
}

/** Boolean tensor (1 = may attend, 0 = masked). */
export interface RawBoolTensor {
  data: Uint8Array;
  shape: number[];
}

/**
 * One engine call (cpp/bindings/call.hpp). Buffer requests return the address
 * of a buffer the call owns, or 0 with the reason in error(); run() returns ""
 * or the core's error message. delete() frees everything.
 */
export interface RawCall {
  tensor(name: string, rank: number, d0: number, d1: number, d2: number, d3: number): number;
  bytes(name: string, rank: number, d0: number, d1: number, d2: number, d3: number): number;
  counts(name: string, n: number): number;
  number(name: string, value: number): void;
  text(name: string, value: string): void;
  run(fn: string): string;
  /** Output names, one a line, in the order of the table. */
  outputNames(): string;
  /** Address of kOutputRecord doubles per output: type, address, size, number, rank, dims. */
  outputTable(): number;
  error(): string;
  delete(): void;
}

export interface AttnModule {
  Call: new () => RawCall;
  kOutputRecord: number;
  HEAPF32: Float32Array;
  HEAPF64: Float64Array;
  HEAPU8: Uint8Array;
  _version(): string;
  _simd_arch(): string;
  /** The core's set_threads: "" or the reason it refused. */
  _set_threads(threads: number): string;
  _thread_count(): number;
  /** The core's matmul_tile_rows (measured on the first call in WebAssembly). */
  _matmul_tile_rows(): number;
  /** The core's set_matmul_tile_rows (0: measure again): "" or the reason it refused. */
  _set_matmul_tile_rows(rows: number): string;
  _heap_in_use(): number;
  _heap_size(): number;
  /** Bytes malloc can still obtain, growth included. */
  _memory_available(): number;
}

export interface AttnModuleOptions {
  wasmBinary?: ArrayBuffer | Uint8Array;
  locateFile?: (path: string, scriptDirectory: string) => string;
  instantiateWasm?: (
    imports: WebAssembly.Imports,
    receive: (instance: WebAssembly.Instance, module?: WebAssembly.Module) => void,
  ) => WebAssembly.Exports | Record<string, never>;
  print?: (text: string) => void;
  printErr?: (text: string) => void;
  onAbort?: (what: unknown) => void;
}

declare function createAttnModule(options?: AttnModuleOptions): Promise<AttnModule>;
export default createAttnModule;
