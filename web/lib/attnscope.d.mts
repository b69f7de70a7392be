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

/** Attention options, already normalised by the TypeScript layer. */
export interface RawOptions {
  scaleMode: 'inv_sqrt_dk' | 'none' | 'custom';
  scaleFactor: number;
  causal: boolean;
  lengths?: number[];
  additive?: RawTensor;
  allowed?: RawBoolTensor;
  trace: boolean;
  /** attention only: the output is written into this array (its size checked by the caller). */
  out?: Float32Array;
}

export interface RawSelfAttentionWeights {
  wq: RawTensor;
  wk: RawTensor;
  wv: RawTensor;
  bq?: RawTensor;
  bk?: RawTensor;
  bv?: RawTensor;
  wo?: RawTensor;
  bo?: RawTensor;
  heads: number;
}

export interface RawLinear {
  weight: RawTensor;
  bias?: RawTensor;
}

export interface RawBlockWeights {
  attention: RawSelfAttentionWeights;
  norm1Gamma?: RawTensor;
  norm1Beta?: RawTensor;
  norm2Gamma?: RawTensor;
  norm2Beta?: RawTensor;
  ff1: RawLinear;
  ff2: RawLinear;
  activation: 'relu' | 'gelu';
  eps: number;
  normFirst: boolean;
}

/** Every bound function answers with this envelope; C++ exceptions never escape. */
export type RawResult<T> = { ok: true; value: T } | { ok: false; error: string };

export interface AttnModule {
  _self_attention(x: RawTensor, weights: RawSelfAttentionWeights, options: RawOptions): RawResult<unknown>;
  _attention(q: RawTensor, k: RawTensor, v: RawTensor, options: RawOptions): RawResult<unknown>;
  _positional_encoding(length: number, dim: number, base: number): RawResult<RawTensor>;
  /** out: the output is written into this array (its size checked by the caller). */
  _linear(x: RawTensor, layer: RawLinear, out: Float32Array | undefined): RawResult<RawTensor>;
  _layer_norm(x: RawTensor, gamma: RawTensor | undefined, beta: RawTensor | undefined, eps: number): RawResult<RawTensor>;
  _feed_forward(x: RawTensor, first: RawLinear, second: RawLinear, activation: 'relu' | 'gelu'): RawResult<RawTensor>;
  _residual_add(a: RawTensor, b: RawTensor): RawResult<RawTensor>;
  _transformer_block(x: RawTensor, block: RawBlockWeights, options: RawOptions): RawResult<unknown>;
  _version(): string;
  _simd_arch(): string;
  _heap_in_use(): number;
  _heap_size(): number;
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
}

declare function createAttnModule(options?: AttnModuleOptions): Promise<AttnModule>;
export default createAttnModule;
