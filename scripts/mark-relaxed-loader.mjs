// Marks a single-thread relaxed-SIMD module with an empty custom section,
//   node scripts/mark-relaxed-loader.mjs dist/attnscope-relaxed.wasm
// so that the package instantiates it with its own loader
// (attnscope-relaxed.mjs) however its bytes arrive (a file of the package,
// wasmUrl, locateFile or wasmBinary). Emscripten shortens the names of the
// module's imports in the order of how often the code calls them, and the
// relaxed build's calls can tie differently from the plain build's: the two
// loaders then map the same names to different functions, and each module
// must get its own.
import { readFileSync, writeFileSync } from 'node:fs';

import { uleb } from './relaxed-simd-opcodes.mjs';

const kRelaxedLoaderSection = 'attnscope.relaxed-loader';

/** The bytes of an empty custom section named `name`. */
function customSection(name) {
  const nameBytes = new TextEncoder().encode(name);
  const payload = [...uleb(nameBytes.length), ...nameBytes];
  return Uint8Array.from([0, ...uleb(payload.length), ...payload]);
}

const path = process.argv[2];
if (!path) {
  console.error('usage: node scripts/mark-relaxed-loader.mjs module.wasm');
  process.exit(2);
}
const bytes = readFileSync(path);
const section = customSection(kRelaxedLoaderSection);
// Appended last, so a module marked before ends with it.
if (!bytes.subarray(-section.length).equals(section)) {
  writeFileSync(path, Buffer.concat([bytes, section]));
}
