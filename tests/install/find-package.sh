#!/usr/bin/env bash
# Installs the library from a native build (default build/native, built and
# configured first if needed) into a temporary prefix, then builds and runs
# tests/install against it through find_package(attnscope CONFIG REQUIRED).
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build/native}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
[[ -f $build/CMakeCache.txt ]] || cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$build" --target attnscope -j2 >/dev/null
cmake --install "$build" --prefix "$work/prefix" >/dev/null
cmake -S tests/install -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$work/prefix" | grep -- '-- attnscope'
cmake --build "$work/build" -j2 >/dev/null
"$work/build/worked_example"
