#!/usr/bin/env bash
# Builds the npm package into dist/: the wasm module (Emscripten through
# CMake) in four flavours, plain SIMD (build/wasm), relaxed SIMD
# (build/wasm-relaxed, see cpp/src/kernels/multiply_add.hpp), and both again
# threaded (build/wasm-threads, build/wasm-threads-relaxed: pthreads and
# shared memory, their own glue and pthread worker), the TypeScript API
# (web/lib) and the loader's types.
set -euo pipefail
cd "$(dirname "$0")/.."
export NODE_PATH=/usr/share/nodejs   # emcc's optimizer needs Debian's acorn

# directory:relaxed:threads
for flavour in wasm:OFF:OFF wasm-relaxed:ON:OFF wasm-threads:OFF:ON wasm-threads-relaxed:ON:ON; do
  IFS=: read -r dir relaxed threads <<<"$flavour"
  emcmake cmake -S . -B "build/$dir" -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_BUILD_TESTS=OFF \
    -DATTNSCOPE_BUILD_BENCH=OFF "-DATTN_WASM_RELAXED_SIMD=$relaxed" "-DATTN_WASM_THREADS=$threads" >/dev/null
  cmake --build "build/$dir" --target attnscope_wasm -j2
done
# The threaded glue bakes in addresses of static data, which the plain and
# relaxed builds lay out differently: each ships its own glue, and they share
# the pthread worker script.
cmp -s build/wasm-threads/cpp/bindings/attnscope-threads.worker.js \
  build/wasm-threads-relaxed/cpp/bindings/attnscope-threads.worker.js || {
  echo "build: the threaded flavours' worker scripts differ (build/wasm-threads*/cpp/bindings/attnscope-threads.worker.js)" >&2
  exit 1
}

rm -rf dist
node node_modules/typescript/bin/tsc -p web/lib/tsconfig.json
# The loader and its hand-written types sit beside the compiled API, which
# imports ./attnscope.mjs; the loader finds attnscope.wasm next to itself.
cp build/wasm/cpp/bindings/attnscope.mjs build/wasm/cpp/bindings/attnscope.wasm dist/
# The relaxed build has its own loader: the two loaders may name the modules'
# imports differently (scripts/mark-relaxed-loader.mjs says why and marks the
# module so that the package pairs them).
cp build/wasm-relaxed/cpp/bindings/attnscope.wasm dist/attnscope-relaxed.wasm
cp build/wasm-relaxed/cpp/bindings/attnscope.mjs dist/attnscope-relaxed.mjs
cp build/wasm-threads/cpp/bindings/attnscope-threads.{wasm,worker.js} dist/
cp build/wasm-threads-relaxed/cpp/bindings/attnscope-threads.wasm dist/attnscope-threads-relaxed.wasm
# The threaded glue starts its pthread workers with Module.attnscopeWorker when
# given (Node has no Web Worker, web/lib/node-web-worker.ts); the rewrite also
# hides the glue's new Worker(new URL(...)) from bundlers, which would otherwise
# bundle the worker script (the loader always passes locateFile instead).
for glue in wasm-threads:attnscope-threads wasm-threads-relaxed:attnscope-threads-relaxed; do
  sed 's/new Worker(/new (Module["attnscopeWorker"]||Worker)(/g' \
    "build/${glue%:*}/cpp/bindings/attnscope-threads.mjs" >"dist/${glue#*:}.mjs"
  [ "$(grep -o 'new (Module\["attnscopeWorker"\]||Worker)(' "dist/${glue#*:}.mjs" | wc -l)" = 2 ] || {
    echo "build: expected the threaded glue to start workers in 2 places (dist/${glue#*:}.mjs)" >&2
    exit 1
  }
done
# An interrupted rewrite after linking would leave clang's prototype opcodes.
for wasm in dist/attnscope-relaxed.wasm dist/attnscope-threads-relaxed.wasm; do
  node scripts/relaxed-simd-opcodes.mjs --check "$wasm"
done
node scripts/mark-relaxed-loader.mjs dist/attnscope-relaxed.wasm
cp web/lib/attnscope.d.mts web/lib/attnscope-relaxed.d.mts web/lib/attnscope-threads.d.mts \
  web/lib/attnscope-threads-relaxed.d.mts dist/
echo "build: dist/ ready ($(wc -c < dist/attnscope.wasm) bytes of wasm, $(wc -c < dist/attnscope-relaxed.wasm) relaxed, $(wc -c < dist/attnscope-threads.wasm) threaded, $(wc -c < dist/attnscope-threads-relaxed.wasm) threaded relaxed)"
