#!/usr/bin/env bash
# Builds and runs tests/install with the repository as a subproject
# (add_subdirectory); its CMakeLists fails if the tests or benchmarks came along.
set -euo pipefail
cd "$(dirname "$0")/../.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cmake -S tests/install -B "$work/build" -DCMAKE_BUILD_TYPE=Release \
  -DATTNSCOPE_SOURCE_DIR="$PWD" >/dev/null
cmake --build "$work/build" -j2 >/dev/null
"$work/build/worked_example"
