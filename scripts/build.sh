#!/usr/bin/env bash
# Builds the npm package into dist/: the wasm module (Emscripten through
# CMake, in build/wasm), the TypeScript API (web/lib) and the loader's types.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # emcc's optimizer needs Debian's acorn

emcmake cmake -S . -B build/wasm -DCMAKE_BUILD_TYPE=Release \
  -DATTN_BUILD_TESTS=OFF -DATTN_BUILD_BENCH=OFF >/dev/null
cmake --build build/wasm --target attnscope_wasm -j2

rm -rf dist
node node_modules/typescript/bin/tsc -p web/lib/tsconfig.json
# The loader and its hand-written types sit beside the compiled API, which
# imports ./attnscope.mjs; the loader finds attnscope.wasm next to itself.
cp build/wasm/cpp/bindings/attnscope.mjs build/wasm/cpp/bindings/attnscope.wasm dist/
cp web/lib/attnscope.d.mts dist/
echo "build: dist/ ready ($(wc -c < dist/attnscope.wasm) bytes of wasm)"
