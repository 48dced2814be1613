#!/usr/bin/env bash
# Checks scripts/gpu-check.sh's verdict, which needs no GPU: STEPS=summary writes the summary and
# the exit status from the steps recorded in OUTDIR/state. Every recorded step passed: exit 0;
# one failed (a GPU test, a sanitizer sweep's errors, the scale-out gate's wrong exit): exit 1,
# the step named; nothing recorded: exit 1; an unknown step: exit 2 before anything runs.
# Then the step sansweep split over processes (SANSWEEP_SHARDS), with stand-ins for
# compute-sanitizer and the tool: each process gets its own --shard K/N and --out, their counts
# and errors are summed, a process that reports an error or is cut short fails the step.
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

# The stand-ins. The tool: a sweep's shard K/N writes its --out (and its arguments, to
# OUT/args) and closes with "K+1 pass, 0 fail, K skip, 0 error", the shard named by
# FAKE_SAN_CUT then exiting 124 as its timeout had ended it; merge concatenates.
# compute-sanitizer: wants `timeout SECONDS` as the start of its command (the timeout inside
# it, so a cut process still gets its summary), runs it, then prints its summary with 1 error
# for the shard named by FAKE_SAN_FAULT and exits as its command did.
mkdir -p "$TMP/fake/build" "$TMP/fake/bin"
cat >"$TMP/fake/build/rmsnorm-bench" <<'SH'
#!/usr/bin/env bash
case $1 in
  --version) echo "rmsnorm-bench 0.0.0 commit=stand-in"; exit 0 ;;
  merge) shift; ins=(); while [ $# -gt 0 ]; do
      case $1 in -o) out=$2; shift 2 ;; *) ins+=("$1"); shift ;; esac; done
    cat "${ins[@]}" >"$out"; exit 0 ;;
esac
shard=0/1
args="$*"
while [ $# -gt 0 ]; do case $1 in --shard) shard=$2; shift 2 ;; --out) out=$2; shift 2 ;; *) shift ;; esac; done
mkdir -p "$out" && echo "shard $shard" >"$out/results.csv" && echo "$args" >"$out/args"
k=${shard%/*}
echo "$((k + 1)) pass, 0 fail, $k skip, 0 error"
[ "$shard" != "${FAKE_SAN_CUT:-none}" ] || exit 124
SH
cat >"$TMP/fake/bin/compute-sanitizer" <<'SH'
#!/usr/bin/env bash
tool=$2; shift 6  # --tool TOOL --target-processes all --print-limit N
[ "$1" = timeout ] || { echo "stand-in compute-sanitizer: want 'timeout SECONDS' first, got '$1'"; exit 99; }
"$@"; rc=$?
e=0; case " $* " in *" --shard ${FAKE_SAN_FAULT:-none} "*) e=1 ;; esac
if [ "$tool" = racecheck ]; then echo "========= RACECHECK SUMMARY: $e hazards displayed ($e errors, 0 warnings)"
else echo "========= ERROR SUMMARY: $e errors"; fi
exit "$rc"
SH
chmod +x "$TMP/fake/build/rmsnorm-bench" "$TMP/fake/bin/compute-sanitizer"
# sansweep DIR SHARDS WANT_RC: the step over DIR with stand-ins; checks the exit status.
sansweep() {
  local rc=0
  PATH="$TMP/fake/bin:$PATH" BUILD_DIR="$TMP/fake/build" SANITIZER_TOOLS="memcheck racecheck" \
    SANSWEEP_SHARDS=$2 STEPS=sansweep scripts/gpu-check.sh "$1" >"$TMP/out.txt" 2>&1 || rc=$?
  [ "$rc" = "$3" ] || { cat "$TMP/out.txt"; fail "$1: exit $rc, want $3"; }
}
want_line() { grep -qF "$2" "$1/summary.txt" || { grep "tool sweep" "$1/summary.txt"; fail "$1: want '$2'"; }; }

sansweep "$TMP/ss1" 1 0
want_line "$TMP/ss1" "memcheck: rc=0 errors=0 (1 pass, 0 fail, 0 skip, 0 error); memcheck at many rows: rc=0 errors=0 (1 pass"
want_line "$TMP/ss1" "racecheck over clusters: rc=0 errors=0 (1 pass, 0 fail, 0 skip, 0 error);"
grep -qx "shard 0/1" "$TMP/ss1/sansweep-racecheck/results.csv" || fail "one process: the whole sweep, into OUT/NAME"
grep -q -- "--kernel-timeout 0 " "$TMP/ss1/sansweep-racecheck/shards/0/args" ||
  fail "under the sanitizers the tool's own kernel timeout is off: $(cat "$TMP/ss1/sansweep-racecheck/shards/0/args")"

sansweep "$TMP/ss3" 3 0
want_line "$TMP/ss3" "racecheck at many rows: rc=0 errors=0 (6 pass, 0 fail, 3 skip, 0 error, 3 processes);"
for k in 0 1 2; do
  grep -qx "shard $k/3" "$TMP/ss3/sansweep-memcheck/shards/$k/results.csv" || fail "shard $k: its own --shard and --out"
done
[ "$(sort "$TMP/ss3/sansweep-rows-memcheck/results.csv")" = "$(printf 'shard %s/3\n' 0 1 2)" ] ||
  fail "the shards' CSVs merged into OUT/NAME/results.csv"

FAKE_SAN_FAULT=1/3 sansweep "$TMP/ssf" 3 1
want_line "$TMP/ssf" "racecheck: rc=0 errors=1 (6 pass"
grep -qxF "steps passed: none; failed: sansweep; not run: gpu sanitizer wide cpu sweep quick scaleout same vendor strategies bisect" \
  "$TMP/ssf/summary.txt" || fail "an error in one shard fails the step"

FAKE_SAN_CUT=2/3 sansweep "$TMP/ssc" 3 1
want_line "$TMP/ssc" "memcheck: rc=124 errors=0 (6 pass, 0 fail, 3 skip, 0 error, 3 processes)"

rc=0
SANSWEEP_SHARDS=0 STEPS=sansweep scripts/gpu-check.sh "$TMP/bad0" >"$TMP/bad.txt" 2>&1 || rc=$?
[ "$rc" = 2 ] && grep -q "SANSWEEP_SHARDS: '0'" "$TMP/bad.txt" && [ ! -e "$TMP/bad0" ] ||
  { cat "$TMP/bad.txt"; fail "SANSWEEP_SHARDS=0: exit $rc, want 2 before anything runs"; }
# The GPU-test step's shards. A stand-in test binary of five tests: it lists them
# (--gtest_list_tests), runs those its filter names (--gtest_filter, or one in a
# --gtest_flagfile) or, under gtest's sharding variables, every N-th of them, and refuses a
# flag file with the sharding variables set (the shard would then run part of its part). At
# the test FAKE_GPU_CUT names it stops as a timeout would: no closing line, exit 124. The test
# FAKE_GPU_FAIL names fails as a parameterized test does: ", where GetParam() = 4" in its
# closing line and in the summary's list of failed tests (which has no time).
mkdir -p "$TMP/fake/build/tests"
cat >"$TMP/fake/build/tests/rb_gpu_tests" <<'SH'
#!/usr/bin/env bash
all="A.Long A.Mid B.Mid2 B.Short C.New" filter='*' list=0 flagged=0
for a in "$@"; do case $a in
  --gtest_list_tests) list=1 ;;
  --gtest_filter=*) filter=${a#--gtest_filter=} ;;
  --gtest_flagfile=*) flagged=1; filter=$(sed -n 's/^--gtest_filter=//p' "${a#--gtest_flagfile=}") ;;
esac; done
if [ "$list" = 1 ]; then printf 'Running main() from gtest_main.cc\nA.\n  Long\n  Mid\nB.\n  Mid2\n  Short\nC.\n  New\n'; exit 0; fi
[ "$flagged" = 1 ] && [ -n "${GTEST_TOTAL_SHARDS:-}" ] && { echo "sharding variables beside a flag file"; exit 1; }
i=0 n=0
for t in $all; do
  case $filter in
    '*'*) mine=1; [ -n "${GTEST_TOTAL_SHARDS:-}" ] && [ $((i % GTEST_TOTAL_SHARDS)) != "$GTEST_SHARD_INDEX" ] && mine=0 ;;
    *) case ":$filter:" in *":$t:"*) mine=1 ;; *) mine=0 ;; esac ;;
  esac
  i=$((i + 1))
  [ "$mine" = 1 ] && [ "$t" = "${FAKE_GPU_CUT:-none}" ] && { echo "[ RUN      ] $t"; exit 124; }
  [ "$mine" = 1 ] && [ "$t" = "${FAKE_GPU_FAIL:-none}" ] && { echo "[  FAILED  ] $t, where GetParam() = 4 (1 ms)"; failed=$t; continue; }
  [ "$mine" = 1 ] && { echo "[       OK ] $t (1 ms)"; n=$((n + 1)); }
done
echo "[  PASSED  ] $n tests."
[ -n "${failed:-}" ] && { echo "[  FAILED  ] $failed, where GetParam() = 4"; exit 1; }
exit 0
SH
chmod +x "$TMP/fake/build/tests/rb_gpu_tests"
printf '# seconds\nA.Long 100\nA.Mid 60\nB.Mid2 50.0\nB.Short 10\n' >"$TMP/times.txt"
# gpu_step DIR TIMES: the step over DIR with the stand-in, 2 shards; every test passed once.
gpu_step() {
  local rc=0
  BUILD_DIR="$TMP/fake/build" GPU_TEST_TIMES=$2 GPU_SHARDS=2 PLUGIN_TESTS=0 STEPS=gpu scripts/gpu-check.sh "$1" \
    >"$TMP/out.txt" 2>&1 || rc=$?
  [ "$rc" = 0 ] || { cat "$TMP/out.txt" "$1"/gpu-tests.*.log; fail "$1: exit $rc, want 0"; }
  grep -q "^gpu_tests: rc=0 passed=5 failed=0 skipped=0 unfinished=0" "$1/summary.txt" ||
    { cat "$1/summary.txt"; fail "$1: want 5 passed, none unfinished"; }
  [ "$(cat "$1"/gpu-tests.[0-9].log | grep -c '^\[       OK \]')" = 5 ] || fail "$1: each test once"
}
# By the times (C.New unknown: the median, 55 s), longest first into the least loaded shard:
# A.Long 100 | A.Mid 60; C.New 55 to the second; B.Mid2 50 to the first; B.Short 10 to the second.
gpu_step "$TMP/gb" "$TMP/times.txt"
[ "$(cat "$TMP/gb/gpu-shard.0.flags")" = "--gtest_filter=A.Long:B.Mid2" ] &&
  [ "$(cat "$TMP/gb/gpu-shard.1.flags")" = "--gtest_filter=A.Mid:C.New:B.Short" ] ||
  { cat "$TMP/gb"/gpu-shard.*.flags; fail "shards balanced by the times: A.Long:B.Mid2 and A.Mid:C.New:B.Short"; }
# Without a times file: gtest's own sharding, round robin.
gpu_step "$TMP/gr" ""
[ ! -e "$TMP/gr/gpu-shard.0.flags" ] && grep -qx "\[       OK \] B.Mid2 (1 ms)" "$TMP/gr/gpu-tests.0.log" ||
  fail "no times: gtest's sharding (shard 0 of 2: A.Long, B.Mid2, C.New)"
# A shard cut short (round robin: shard 0 runs A.Long, B.Mid2, C.New; cut at B.Mid2): the tests
# it ended before the cut still count, and the two it never ended are named as unfinished.
rc=0
FAKE_GPU_CUT=B.Mid2 BUILD_DIR="$TMP/fake/build" GPU_TEST_TIMES= GPU_SHARDS=2 PLUGIN_TESTS=0 STEPS=gpu \
  scripts/gpu-check.sh "$TMP/gc" >"$TMP/out.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "^gpu_tests: rc=124 passed=3 failed=0 skipped=0 unfinished=2$" "$TMP/gc/summary.txt" ||
  { cat "$TMP/gc/summary.txt"; fail "a cut shard: exit $rc (want 1), its finished tests counted, 2 unfinished"; }
[ "$(cat "$TMP/gc/gpu-unfinished.txt")" = "$(printf 'B.Mid2\nC.New')" ] && [ ! -s "$TMP/gr/gpu-unfinished.txt" ] ||
  { cat "$TMP/gc/gpu-unfinished.txt"; fail "the unfinished tests named in OUT/gpu-unfinished.txt: B.Mid2, C.New"; }
# A parameterized test that fails is counted once as failed, and it ended: not unfinished.
rc=0
FAKE_GPU_FAIL=B.Short BUILD_DIR="$TMP/fake/build" GPU_TEST_TIMES= GPU_SHARDS=2 PLUGIN_TESTS=0 STEPS=gpu \
  scripts/gpu-check.sh "$TMP/gf" >"$TMP/out.txt" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "^gpu_tests: rc=1 passed=4 failed=1 skipped=0 unfinished=0$" "$TMP/gf/summary.txt" &&
  [ ! -s "$TMP/gf/gpu-unfinished.txt" ] ||
  { cat "$TMP/gf/summary.txt" "$TMP/gf/gpu-unfinished.txt"; fail "a failed parameterized test: exit $rc (want 1), 1 failed, none unfinished"; }
echo "gpu-check verdicts: 6 of 6 as expected; sansweep over processes: 5 of 5 as expected; GPU-test shards: 4 of 4"
