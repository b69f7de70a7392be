// Declarations for the relaxed-SIMD threaded loader (attnscope-threads-relaxed.mjs):
// the same interface as the plain threaded loader, glue of another build.
export { default } from './attnscope-threads.mjs';
export type { ThreadedModuleOptions } from './attnscope-threads.mjs';
