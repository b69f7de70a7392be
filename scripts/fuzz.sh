#!/usr/bin/env bash
# Builds the libFuzzer harnesses of the core (tests/fuzz, clang + ASan + UBSan)
# into build/fuzz, replays the committed corpus, then fuzzes each harness.
#   scripts/fuzz.sh            60 s per harness
#   scripts/fuzz.sh 600        10 min per harness
#   FUZZ_HARNESSES="fuzz_block" scripts/fuzz.sh 30
#   FUZZ_MERGE=1 scripts/fuzz.sh   also merge new coverage into tests/fuzz/corpus
# New inputs go to build/fuzz/work/<harness>; a crash is saved as
# build/fuzz/artifacts/<harness>-crash-* and makes the script fail.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-${FUZZ_SECONDS:-60}}
harnesses=${FUZZ_HARNESSES:-"fuzz_attention fuzz_self_attention fuzz_block"}
cxx=${FUZZ_CXX:-$(command -v clang++-14 || command -v clang++)}

CXX=$cxx cmake -S tests/fuzz -B build/fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build/fuzz -j2 >/dev/null
mkdir -p build/fuzz/artifacts

# detect_leaks: a rejected call must not leak either.
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
status=0
for h in $harnesses; do
  corpus=tests/fuzz/corpus/$h
  work=build/fuzz/work/$h
  mkdir -p "$work"
  echo "== $h: replaying $(ls "$corpus" | wc -l) corpus inputs"
  if ! build/fuzz/$h -runs=0 "$corpus" > build/fuzz/$h.replay.log 2>&1; then
    tail -n 30 build/fuzz/$h.replay.log; status=1; continue
  fi
  echo "== $h: fuzzing for $seconds s"
  if build/fuzz/$h -max_total_time="$seconds" -max_len=512 -timeout=10 -rss_limit_mb=2048 \
      -print_final_stats=1 -artifact_prefix=build/fuzz/artifacts/$h- "$work" "$corpus" \
      > build/fuzz/$h.log 2>&1; then
    grep -E '^stat::number_of_executed_units|^stat::average_exec_per_sec|^stat::new_units_added' build/fuzz/$h.log | sed 's/^/   /'
  else
    tail -n 40 build/fuzz/$h.log
    echo "== $h: FAILED (artifact in build/fuzz/artifacts/)"
    status=1
  fi
  if [[ ${FUZZ_MERGE:-0} == 1 ]]; then
    build/fuzz/$h -merge=1 -max_len=512 "$corpus" "$work" > build/fuzz/$h.merge.log 2>&1
    echo "   corpus now $(ls "$corpus" | wc -l) inputs"
  fi
done
exit $status
