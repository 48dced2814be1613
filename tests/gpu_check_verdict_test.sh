#!/usr/bin/env bash
# Checks scripts/gpu-check.sh's verdict, which needs no GPU: STEPS=summary writes the summary and
# the exit status from the steps recorded in OUTDIR/state. Every recorded step passed: exit 0;
# one failed (a GPU test, a sanitizer sweep's errors, the scale-out gate's wrong exit): exit 1,
# the step named; nothing recorded: exit 1; an unknown step: exit 2 before anything runs.
#
#   tests/gpu_check_verdict_test.sh RMSNORM_BENCH
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${1:?usage: tests/gpu_check_verdict_test.sh RMSNORM_BENCH}
export BUILD_DIR
BUILD_DIR=$(dirname "$BIN")
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# verdict DIR WANT_RC WANT_STEPS_LINE: runs the summary over DIR and checks both.
verdict() {
  local rc=0
  STEPS=summary scripts/gpu-check.sh "$1" >"$TMP/out.txt" 2>&1 || rc=$?
  [ "$rc" = "$2" ] || { cat "$TMP/out.txt"; fail "$1: exit $rc, want $2"; }
  grep -qxF "$3" "$1/summary.txt" || { grep steps "$1/summary.txt"; fail "$1: want the line '$3'"; }
}
state() { mkdir -p "$1/state"; printf '%s\n' "${@:3}" >"$1/state/$2.env"; }

state "$TMP/ok" gpu gpu_rc=0
state "$TMP/ok" scaleout so_compare=0 so_fresh=0 so_raised=1
state "$TMP/ok" sansweep ss_bad=0
verdict "$TMP/ok" 0 "steps passed: gpu scaleout sansweep; failed: none; not run: sanitizer wide cpu sweep quick same vendor strategies bisect"

state "$TMP/gpu" gpu gpu_rc=1
state "$TMP/gpu" wide wide_rc=0
verdict "$TMP/gpu" 1 "steps passed: wide; failed: gpu; not run: sanitizer cpu sweep quick scaleout same vendor sansweep strategies bisect"

state "$TMP/san" sansweep ss_bad=1
state "$TMP/san" sanitizer san_errors=0 san_rc=124
verdict "$TMP/san" 1 "steps passed: none; failed: sanitizer sansweep; not run: gpu wide cpu sweep quick scaleout same vendor strategies bisect"

state "$TMP/gate" scaleout so_compare=0 so_fresh=0 so_raised=0
verdict "$TMP/gate" 1 "steps passed: none; failed: scaleout; not run: gpu sanitizer wide cpu sweep quick same vendor sansweep strategies bisect"

verdict "$TMP/none" 1 "steps passed: none; failed: none; not run: gpu sanitizer wide cpu sweep quick scaleout same vendor sansweep strategies bisect"

rc=0
STEPS="gpu bogus" scripts/gpu-check.sh "$TMP/bad" >"$TMP/bad.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] || fail "unknown step: exit $rc, want 2"
grep -q "STEPS: unknown step 'bogus'" "$TMP/bad.txt" || { cat "$TMP/bad.txt"; fail "want the unknown step named"; }
[ ! -e "$TMP/bad" ] || fail "an unknown step must stop before anything runs, OUTDIR not made"
echo "gpu-check verdicts: 6 of 6 as expected"
