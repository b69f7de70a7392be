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

step "native core: build + ctest"
cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j"$jobs"
ctest --test-dir build/native --output-on-failure --no-tests=error

step "native core under AddressSanitizer + UBSan"
cmake -S . -B build/sanitize -DCMAKE_BUILD_TYPE=Debug -DATTN_SANITIZE=ON -DATTN_BUILD_BENCH=OFF >/dev/null
cmake --build build/sanitize -j"$jobs"
ASAN_OPTIONS=detect_leaks=1 ctest --test-dir build/sanitize --output-on-failure --no-tests=error

step "demo site: build + end-to-end tests in headless Chromium"
[[ -f dist/browser.js && -f dist/attnscope.wasm ]] || npm run build
bash scripts/build-site.sh
node --test tests/e2e/
