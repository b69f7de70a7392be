#!/usr/bin/env bash
# The inner loop: the native Catch2 suite (build/native, incremental) and the
# package's Node tests. Rebuilds dist/ first only when it is missing or older
# than its sources (scripts/check-dist.mjs decides). The full suite is
# scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
[[ -f build/native/CMakeCache.txt ]] || cmake -S . -B build/native -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build/native -j"$jobs"
ctest --test-dir build/native --output-on-failure --no-tests=error -j"$jobs"
node scripts/check-dist.mjs 2>/dev/null || npm run build
node --test tests/js/
