#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/*_fuzz.cpp) with clang, -fsanitize=fuzzer,address,
# undefined, into ${FUZZ_DIR:-build-fuzz}, and runs each for FUZZ_SECONDS (default 60) from its
# committed corpus (tests/fuzz/corpus/<target>/; new inputs go to FUZZ_DIR, the committed seeds
# stay as they are). Fails on any crash, sanitizer report or broken property: the input that
# did it is left in FUZZ_DIR/<target>/crash-* (rerun: FUZZ_DIR/<target>/fuzz THAT_FILE).
# Usage: scripts/fuzz.sh [TARGET...]   (targets: csv_reader lists; default both)
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_DIR=${FUZZ_DIR:-build-fuzz}
FUZZ_SECONDS=${FUZZ_SECONDS:-60}
# libFuzzer's random seed: fixed by default, so a CI run explores the same inputs each time
# and a failure it reports is reproducible; FUZZ_SEED=0 picks a fresh one per run.
FUZZ_SEED=${FUZZ_SEED:-1}

# clang and its libFuzzer runtime (Debian: libclang-rt-dev), installed only when missing.
scripts/setup.sh clang libclang-rt-dev

CXX=${FUZZ_CXX:-clang++}
FLAGS=(-std=c++17 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined
       -Wno-unknown-warning-option -DFMT_HEADER_ONLY -I. -pthread)
# The code under test, compiled directly (host-only C++, no CUDA, no CLI11).
declare -A SOURCES=(
  [csv_reader]="reports/columns.cpp reports/record.cpp reports/csv_reader.cpp reports/csv_writer.cpp"
  [lists]="app/lists.cpp"
)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(csv_reader lists)

rc=0
for t in "${targets[@]}"; do
  [ -n "${SOURCES[$t]:-}" ] || { echo "fuzz: unknown target '$t' (csv_reader, lists)" >&2; exit 2; }
  out="$FUZZ_DIR/$t"
  mkdir -p "$out/corpus"
  # shellcheck disable=SC2086
  "$CXX" "${FLAGS[@]}" "tests/fuzz/${t}_fuzz.cpp" ${SOURCES[$t]} -o "$out/fuzz"
  echo "fuzz: $t for ${FUZZ_SECONDS}s" >&2
  if ! (cd "$out" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
        ./fuzz -max_total_time="$FUZZ_SECONDS" -seed="$FUZZ_SEED" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        corpus "../../tests/fuzz/corpus/$t" 2>fuzz.log); then
    echo "fuzz: $t FAILED; the input is in $out/crash-* (or timeout-*, oom-*); log: $out/fuzz.log" >&2
    grep -E "^(==|SUMMARY|lists_fuzz|csv_reader_fuzz|.*runtime error)" "$out/fuzz.log" | head -20 >&2 || true
    rc=1
  else
    grep -E "stat::number_of_executed_units|stat::peak_rss_mb" "$out/fuzz.log" | sed "s/^/fuzz: $t: /" >&2
  fi
done
exit $rc
