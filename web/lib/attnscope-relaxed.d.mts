// Declarations for the relaxed-SIMD single-thread loader (attnscope-relaxed.mjs):
// the same interface as the plain loader, glue of another build.
export { default } from './attnscope.mjs';
export type { AttnModuleOptions } from './attnscope.mjs';
