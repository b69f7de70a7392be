// Declarations for the threaded flavour's Emscripten loader
// (attnscope-threads.mjs): the same module as attnscope.mjs, built with
// pthreads, plus the options its pool of pthread workers reads.
import type { AttnModule, AttnModuleOptions } from './attnscope.mjs';

export interface ThreadedModuleOptions extends AttnModuleOptions {
  /** Web workers the glue starts before the module is ready (the core's pool threads). */
  attnscopeWorkers: number;
  /** What each pthread worker imports to run the module: this loader's own URL. */
  mainScriptUrlOrBlob: string;
  /** The Worker class to start them with (default: the global Worker; Node has none). */
  attnscopeWorker?: new (url: string) => unknown;
}

export default function createAttnModule(options?: ThreadedModuleOptions): Promise<AttnModule>;
