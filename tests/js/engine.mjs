// One engine per test file, loaded through the package's own name so the
// tests exercise the published entry points (dist/) exactly as a user would.
import { createAttnScope } from 'attnscope';

// ATTNSCOPE_TEST_THREADS=1 runs the suites on a single-thread build (in Node
// "auto" picks the threaded one); scripts/test.sh runs both.
// Workers that must give the engine's bits are made with the same options.
const threads = process.env.ATTNSCOPE_TEST_THREADS;
export const engineOptions = threads ? { threads: Number(threads) } : {};
export const engine = await createAttnScope(engineOptions);
