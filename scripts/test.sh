#!/usr/bin/env bash
# Runs every test suite of attnscope and exits non-zero if any fails.
# Installs what is missing first (scripts/setup.sh), so it works on a fresh
# Debian 12 machine. Set ATTN_SKIP_SETUP=1 to skip that step.
set -euo pipefail
cd "$(dirname "$0")/.."
[[ ${ATTN_SKIP_SETUP:-0} == 1 ]] || bash scripts/setup.sh
export NODE_PATH=/usr/share/nodejs   # emcc's optimizer needs Debian's acorn
jobs=$(nproc)

step() { printf '\n==== %s ====\n' "$*"; }

# Everything the suites print is also kept in a log, so that the closing line
# can add up what ctest and node's test runner counted across all suites.
mkdir -p build
log=build/test-all.log
: > "$log"
exec > >(tee -a "$log") 2>&1
summary() {
  local status=$? passed failed
  passed=$(awk '/tests passed, [0-9]+ tests failed out of/ {p += $NF - $4} /^# pass [0-9]+$/ {p += $3} END {print p + 0}' "$log")
  failed=$(awk '/tests passed, [0-9]+ tests failed out of/ {f += $4} /^# fail [0-9]+$/ {f += $3} END {print f + 0}' "$log")
  if ((status != 0 && failed == 0)); then failed=1; fi   # a step failed outside a test runner
  printf '\n==== summary (ctest + node --test, every suite above) ====\n'
  printf 'tests: %d passed, %d failed\n' "$passed" "$failed"
  exit "$status"
}
trap summary EXIT

step "style: clang-format and Prettier (scripts/format.sh --check)"
bash scripts/format.sh --check

step "native core: build + ctest"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j"$jobs"
ctest --test-dir build/native --output-on-failure --no-tests=error

step "C++ consumers: find_package from an install prefix, add_subdirectory"
bash tests/install/find-package.sh build/native
bash tests/install/add-subdirectory.sh

step "native core under AddressSanitizer + UBSan"
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DATTN_SANITIZE=ON -DATTNSCOPE_BUILD_BENCH=OFF >/dev/null
cmake --build build/sanitize -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/sanitize --output-on-failure --no-tests=error

step "core compiled to wasm: Catch2 suite under Node (ctest)"
# emcmake's default emulator flag (--experimental-wasm-threads) is rejected by
# Node 20, which would leave ctest with no tests; hence the explicit emulator.
# The relaxed-SIMD flavour (fused multiply-add) runs the same suite; its
# CMake adds Node's relaxed-SIMD flag to the emulator where Node needs one.
# The threaded flavour (pthreads on shared memory) runs it with the core's
# pool on several threads, as the threaded package builds do.
# directory:relaxed:threads
for flavour in wasm-tests:OFF:OFF wasm-tests-relaxed:ON:OFF wasm-tests-threads:OFF:ON; do
  IFS=: read -r dir relaxed threads <<<"$flavour"
  emcmake cmake -S . -B "build/$dir" -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_BUILD_BENCH=OFF \
    "-DATTN_WASM_RELAXED_SIMD=$relaxed" "-DATTN_WASM_THREADS=$threads" \
    "-DCMAKE_CROSSCOMPILING_EMULATOR=/usr/bin/node;--no-experimental-fetch" >/dev/null
  cmake --build "build/$dir" --target attnscope_tests -j"$jobs"
  ctest --test-dir "build/$dir" --output-on-failure --no-tests=error -j"$jobs"
done

step "npm package: build dist/ + JS tests"
npm run build
node --test tests/js/
# In Node the engines above run the threaded build ("auto"); the suite runs
# again on a single-thread build (tests/js/engine.mjs), with relaxed SIMD on
# where Node 20 needs a flag for it, so the relaxed build is checked too.
relaxed_flag=$(node --v8-options | grep -o -m1 -- '--experimental-wasm-relaxed-simd' || true)
ATTNSCOPE_TEST_THREADS=1 node ${relaxed_flag:+"$relaxed_flag"} --test tests/js/

step "npm package: packed tarball in Node, strict TypeScript, Vite + Chromium"
bash tests/package/run.sh

step "demo site: build + end-to-end tests in headless Chromium"
[[ -f dist/browser.js && -f dist/attnscope.wasm ]] || npm run build
bash scripts/build-site.sh
# With relaxed SIMD in Node too, so that the package's numbers the tests
# compare with the page's come from the same (relaxed) build as Chromium's.
node $relaxed_flag --test tests/e2e/

step "fuzzing: libFuzzer harnesses of the core (ASan+UBSan): corpus replay + 60 s each"
bash scripts/fuzz.sh "${ATTN_FUZZ_SECONDS:-60}"

step "fuzzing: the site's parsers and the package API (fast-check)"
node --test tests/fuzz/js/

step "soak: 100 000 API calls, then the site animating for 60 s"
[[ -f web/app/dist/index.html ]] || bash scripts/build-site.sh
node --expose-gc tests/soak/api-soak.mjs --calls=100000
node tests/soak/site-soak.mjs --seconds="${ATTN_SOAK_SECONDS:-60}"
