#!/usr/bin/env bash
# Builds the npm package into dist/: the wasm module (Emscripten through
# CMake) in two flavours, plain SIMD (build/wasm) and relaxed SIMD
# (build/wasm-relaxed, see cpp/src/kernels/multiply_add.hpp), the TypeScript
# API (web/lib) and the loader's types.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # emcc's optimizer needs Debian's acorn

for flavour in wasm:OFF wasm-relaxed:ON; do
  emcmake cmake -S . -B "build/${flavour%:*}" -DCMAKE_BUILD_TYPE=Release \
    -DATTNSCOPE_BUILD_TESTS=OFF -DATTNSCOPE_BUILD_BENCH=OFF "-DATTN_WASM_RELAXED_SIMD=${flavour#*:}" >/dev/null
  cmake --build "build/${flavour%:*}" --target attnscope_wasm -j2
done
# One loader serves both wasm files: they must export and import the same.
cmp -s build/wasm/cpp/bindings/attnscope.mjs build/wasm-relaxed/cpp/bindings/attnscope.mjs || {
  echo "build: the two flavours' loaders differ (build/wasm*/cpp/bindings/attnscope.mjs)" >&2
  exit 1
}

rm -rf dist
node node_modules/typescript/bin/tsc -p web/lib/tsconfig.json
# The loader and its hand-written types sit beside the compiled API, which
# imports ./attnscope.mjs; the loader finds attnscope.wasm next to itself.
cp build/wasm/cpp/bindings/attnscope.mjs build/wasm/cpp/bindings/attnscope.wasm dist/
cp build/wasm-relaxed/cpp/bindings/attnscope.wasm dist/attnscope-relaxed.wasm
# An interrupted rewrite after linking would leave clang's prototype opcodes.
node scripts/relaxed-simd-opcodes.mjs --check dist/attnscope-relaxed.wasm
cp web/lib/attnscope.d.mts dist/
echo "build: dist/ ready ($(wc -c < dist/attnscope.wasm) bytes of wasm, $(wc -c < dist/attnscope-relaxed.wasm) relaxed)"
