#!/usr/bin/env bash
# Builds the host code with AddressSanitizer + UndefinedBehaviorSanitizer (-DRB_SANITIZE=ON,
# into ${BUILD_DIR:-build-asan}) and runs the CPU test binaries under them. Any sanitizer
# report fails the run: UBSan halts on the first finding, ASan aborts, leaks included.
# Without a GPU the CUDA calls fail cleanly and the GPU tests are not run here.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build-asan}
export BUILD_DIR
scripts/build.sh -DRB_SANITIZE=ON

supp="$PWD/scripts/lsan.supp"
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$supp:print_suppressions=0}

for t in rb_cpu_tests rb_cpu_plugin_tests; do
  echo "test-sanitized: $BUILD_DIR/tests/$t" >&2
  "$BUILD_DIR/tests/$t" --gtest_brief=1
done
echo "test-sanitized: no sanitizer findings" >&2
