#!/usr/bin/env bash
# Benchmarks attnscope: the Node benchmark against other WebAssembly runtimes
# (web/bench/attention-bench.mjs, ~3 minutes on 2 cores), the worker pool
# against one thread (web/bench/pool-bench.mjs), then the native
# benchmark if scripts/bench-native.sh exists. Rebuilds dist/ first when it is
# missing or older than the sources.
#   npm run bench                  full run → web/bench/results/latest.json, attention.svg
#   npm run bench -- --quick       T ≤ 256, a few repetitions (smoke test, ~20 s)
#   npm run bench -- --clock=cpu   time by process CPU time (on a busy, shared machine)
#   ATTN_BENCH_NATIVE=0 npm run bench   skip the native benchmark
#   ATTN_BENCH_POOL=0 npm run bench     skip the worker-pool benchmark (pool-bench.mjs, ~1 minute)
#   ATTN_BENCH_GPT2=0 npm run bench     skip GPT-2 against onnxruntime-web and TF.js (gpt2-bench.mjs,
#                                       ~10 minutes and 3 GB of memory at GPT-2 small's size)
#   ATTN_BENCH_THREADS=0 npm run bench  skip the threaded build against onnxruntime-web's threads
#                                       (threads-bench.mjs in Node, threads-browser.mjs in Chromium)
#   ATTN_BENCH_TRAIN=0 npm run bench    skip the GPT-2 training step against TF.js (train-bench.mjs, ~1 minute)
#                                       and the flash attention backward (backward-bench.mjs, ~1 minute)
#   npm run bench -- --threads=8        the thread count of that comparison (default: every hardware thread)
#   ATTN_BENCH_SITE_GPT2=1 npm run bench  also the site's token edits with a GPT-2-small-shaped model in
#                                       Chromium (site-gpt2-edit.mjs; off by default: needs the built site,
#                                       writes a 500 MB file, ~3 minutes)
#   ATTN_BENCH_RELAXED=0 npm run bench  do not turn on Node 20's relaxed SIMD (plain SIMD build only)
# Other arguments go to attention-bench.mjs (--sizes=64,256 --no-large --out=dir).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==== %s ====\n' "$*"; }

# dist/ is stale if any source of the package is newer than its wasm.
stale=0
if [[ ! -f dist/attnscope.wasm || ! -f dist/node.js ]]; then
  stale=1
elif [[ ! -f dist/attnscope-relaxed.wasm ]]; then
  stale=1
elif [[ -n $(find cpp/include cpp/src cpp/bindings web/lib CMakeLists.txt -newer dist/attnscope.wasm -type f -print -quit 2>/dev/null) ]]; then
  stale=1
fi
if ((stale)); then
  step "package: npm run build (dist/ missing or older than its sources)"
  npm run --silent build
fi

# The core alone in wasm (web/bench/core-probe.cpp linked against the library
# that the package build left in build/wasm), so the benchmark can separate
# kernel time from the bindings' cost; and its threaded twin, linked against
# build/wasm-threads, whose glue starts its pthread workers as the package's
# does (scripts/build.sh). A few seconds each; ATTN_BENCH_PROBE=0 skips them.
probe_exports=_probe_set_threads,_probe_prepare_attention,_probe_run_attention,_probe_prepare_decode,_probe_prepare_linear,_probe_run_linear,_probe_prepare_matmul,_probe_run_matmul,_probe_prepare_products,_probe_run_products
build_probe() { # <library> <output name> <extra em++ flags...>
  local lib=$1 name=$2
  shift 2
  local out=build/bench-probe/$name.wasm
  if [[ ! -f $lib ]]; then
    echo "bench: $lib not found (dist/ built elsewhere?); the core-alone rows of $name are skipped"
  elif [[ ! -f $out || $lib -nt $out || web/bench/core-probe.cpp -nt $out ]]; then
    step "core probe: web/bench/core-probe.cpp → build/bench-probe/$name"
    export NODE_PATH=/usr/share/nodejs
    mkdir -p build/bench-probe
    # The kernels' headers too: the probe also times them on their own.
    em++ -O3 -std=c++17 -msimd128 -msse2 -fexceptions -Icpp/include -Icpp/src \
      -Ibuild/wasm/third-party-include web/bench/core-probe.cpp "$lib" \
      -o "build/bench-probe/$name.mjs" -sMODULARIZE=1 -sEXPORT_ES6=1 -sENVIRONMENT=web,worker \
      -sALLOW_MEMORY_GROWTH=1 -sMAXIMUM_MEMORY=4GB -sEXPORTED_FUNCTIONS=$probe_exports "$@"
  fi
}
if [[ ${ATTN_BENCH_PROBE:-1} != 0 ]]; then
  build_probe build/wasm/libattnscope.a core-probe
  build_probe build/wasm-threads/libattnscope.a core-probe-threads -pthread \
    '-sPTHREAD_POOL_SIZE=Module.attnscopeWorkers||0' -sPTHREAD_POOL_SIZE_STRICT=2 -Wno-pthreads-mem-growth
  if [[ -f build/bench-probe/core-probe-threads.mjs ]] &&
    ! grep -q 'attnscopeWorker"\]||Worker' build/bench-probe/core-probe-threads.mjs; then
    sed -i 's/new Worker(/new (Module["attnscopeWorker"]||Worker)(/g' build/bench-probe/core-probe-threads.mjs
  fi
fi

# Node 20 runs relaxed SIMD only behind a flag (Node 22+ and Chromium 114+
# have it on): with it, attnscope loads its relaxed-SIMD build, as those
# engines do, and the plain SIMD build is timed beside it.
node_flags=(--expose-gc)   # lets the benchmark collect garbage between runtimes
if [[ ${ATTN_BENCH_RELAXED:-1} != 0 ]] && node --v8-options | grep -q -- '--experimental-wasm-relaxed-simd'; then
  node_flags+=(--experimental-wasm-relaxed-simd)
fi

step "Node: attnscope vs onnxruntime-web, tfjs-backend-wasm, plain JS (single thread)"
node "${node_flags[@]}" web/bench/attention-bench.mjs "$@"

if [[ ${ATTN_BENCH_POOL:-1} != 0 ]]; then
  step "Node: the worker pool (attnscope/worker, every core) against one thread"
  pool_args=()
  for a in "$@"; do [[ $a == --quick || $a == --out=* ]] && pool_args+=("$a"); done
  node "${node_flags[@]:1}" web/bench/pool-bench.mjs "${pool_args[@]+"${pool_args[@]}"}"
fi

if [[ ${ATTN_BENCH_GPT2:-1} != 0 ]]; then
  step "Node: GPT-2 small's shape in attnscope, onnxruntime-web and TF.js (single thread)"
  gpt2_args=()
  for a in "$@"; do [[ $a == --quick ]] && gpt2_args+=("$a"); done
  node "${node_flags[@]}" web/bench/gpt2-bench.mjs "${gpt2_args[@]+"${gpt2_args[@]}"}"
fi

if [[ ${ATTN_BENCH_TRAIN:-1} != 0 ]]; then
  step "Node: a GPT-2 training step in attnscope and TF.js (single thread), and native's ratio"
  train_args=()
  for a in "$@"; do [[ $a == --clock=* ]] && train_args+=("$a"); done
  if [[ ${ATTN_BENCH_NATIVE:-1} != 0 ]]; then
    # The native side of the ratio: attnscope_bench train, built as bench-native.sh builds it.
    cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_BUILD_TESTS=OFF \
      -DATTN_NATIVE_ARCH="${ATTN_NATIVE_ARCH:-OFF}" >/dev/null
    cmake --build build/bench -j2 --target attnscope_bench >/dev/null
  else
    train_args+=(--native=none)
  fi
  node "${node_flags[@]}" web/bench/train-bench.mjs "${train_args[@]+"${train_args[@]}"}"
  step "Node: the flash attention backward against the wasm SIMD peak (single thread)"
  backward_args=()
  for a in "$@"; do [[ $a == --clock=* ]] && backward_args+=("$a"); done
  node "${node_flags[@]}" web/bench/backward-bench.mjs "${backward_args[@]+"${backward_args[@]}"}"
fi

if [[ ${ATTN_BENCH_THREADS:-1} != 0 ]]; then
  step "Node: the threaded build against onnxruntime-web with as many threads, and its scaling"
  threads_args=()
  for a in "$@"; do [[ $a == --quick || $a == --out=* || $a == --threads=* ]] && threads_args+=("$a"); done
  node "${node_flags[@]:1}" web/bench/threads-bench.mjs "${threads_args[@]+"${threads_args[@]}"}"
  step "Chromium: the same comparison on a cross-origin-isolated page"
  node "${node_flags[@]:1}" web/bench/threads-browser.mjs "${threads_args[@]+"${threads_args[@]}"}"
fi

if [[ ${ATTN_BENCH_SITE_GPT2:-0} != 0 ]]; then
  step "Chromium: the site's token edits at T = 64 with a GPT-2-small-shaped model"
  node web/bench/site-gpt2-edit.mjs
fi

if [[ -f scripts/bench-native.sh && ${ATTN_BENCH_NATIVE:-1} != 0 ]]; then
  step "native C++ benchmark (scripts/bench-native.sh)"
  bash scripts/bench-native.sh
fi
