// Entry for browsers, workers and bundlers: the wasm is fetched next to the
// loader (new URL('attnscope.wasm', import.meta.url)) unless overridden.
export * from './index.js';
