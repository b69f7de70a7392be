#!/usr/bin/env bash
# Builds the native benchmarks in Release (build/bench) and runs them.
# Usage: scripts/bench-native.sh [max_T]   (default 4096; about 1-2 minutes)
# Set ATTN_NATIVE_ARCH=ON to compile for this CPU (-march=native) instead of
# the portable SSE2 baseline.
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build/bench -DCMAKE_BUILD_TYPE=Release -DATTNSCOPE_BUILD_TESTS=OFF \
  -DATTN_NATIVE_ARCH="${ATTN_NATIVE_ARCH:-OFF}" >/dev/null
cmake --build build/bench -j2 --target attnscope_bench
./build/bench/cpp/bench/attnscope_bench "$@"
