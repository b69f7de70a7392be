// One engine per test file, loaded through the package's own name so the
// tests exercise the published entry points (dist/) exactly as a user would.
import { createAttnScope } from 'attnscope';

export const engine = await createAttnScope();
