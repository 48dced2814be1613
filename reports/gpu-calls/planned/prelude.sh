# Sourced first by the planned calls (bash): their files go to $R (/tmp/r), returned at the
# end as one tar (a call returns 8 files at most: s39a.sh lost 9 of 17 logs); el prints the
# seconds since the call began; `unpack DIR BUNDLE` unpacks a carried bundle unless DIR's tool
# is on the machine (kept from the call before); `machine` names the tool and the GPU.
set -uo pipefail
R=/tmp/r
# Emptied first: a warm machine keeps /tmp between calls, and s43e.sh's tar carried s43b.sh's
# leftovers (two partial CSVs a shard); s38c.sh after s43c.sh would have timed into s43c's $R/ab.
rm -rf "$R" && mkdir -p "$R"
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
unpack() { "$1"/rmsnorm-bench --version 2>/dev/null || tar xJf "$2" || exit 9; }
machine() { build/rmsnorm-bench --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader; }
# An ncu --kernel-name regex for a vendor's kernels: every name but the tool's own helpers
# (read_flush_kernel, the guard scans' scan_kernel and hash_kernel), without lookahead: names
# not starting read, sc or ha (s56c.sh spelled it out).
NOT_OURS='^([^rsh]|r[^e]|s[^c]|h[^a]).*'
# rerun_unfinished LIST S: the GPU tests an earlier GPU-test step named unfinished in LIST (its
# gpu-unfinished.txt), in shards of their own (16 at most), the plugin tests left out, bounded
# at S seconds; files in $R/gc2. s50b.sh and s52.sh's follow stage.
rerun_unfinished() {
  local left n
  left=$(paste -sd: "$1")
  n=$(grep -c . "$1")
  echo "unfinished: $n: $left"
  [ "$n" -gt 0 ] || return 0
  GTEST_FILTER="$left" PLUGIN_TESTS=0 GPU_SHARDS=$((n < 16 ? n : 16)) STEP_TIMEOUT=$2 STEPS=gpu \
    timeout $(($2 + 20)) scripts/gpu-check.sh $R/gc2 >$R/gc2.log 2>&1
  echo "gpu tests rc=$? $(el)"; head -8 $R/gc2/summary.txt
  grep -h "^\[  FAILED\|^\[       OK \]" $R/gc2/gpu-tests.*.log | grep -v MutantCaught
  grep -h "^MUTANT" $R/gc2/gpu-tests.*.log | cut -c1-170
}
# report_checks: what a kernel experiment's checks (s44b.sh, s44c.sh) left in $R: the GPU
# tests' summary and lines, the validation shards' exit codes and counts, the sanitizers'.
report_checks() {
  echo "checks done $(el)"
  head -6 "$R/gc/summary.txt"
  grep -h "^\[  FAILED\|^\[       OK \]" "$R"/gc/gpu-tests.*.log
  grep -h "rc=\|pass, .* fail" "$R"/val.*.log
  cat "$R/san.txt"
  grep -h "pass, .* fail" "$R"/san-*.log
  grep -h "SUMMARY" "$R"/san-*.log
}
# gpu_tests_step S: the GPU check's GPU-test step (every kernel's validation sweep, the
# mutants, the plugin tests) in 16 shards, bounded at S seconds, into $R/gc; then
# memcheck_sansweeps: memcheck over the three sansweeps into $R/sa. s57a.sh's two steps, for the
# calls after it (s58a.sh, s58b.sh).
gpu_tests_step() {
  GPU_SHARDS=16 STEP_TIMEOUT=$1 STEPS=gpu timeout $(($1 + 20)) scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
  echo "gpu tests rc=$? $(el)"; head -8 $R/gc/summary.txt
  grep -h "^\[  FAILED" $R/gc/gpu-tests.*.log
  grep -h "^MUTANT" $R/gc/gpu-tests.*.log | cut -c1-170
}
memcheck_sansweeps() {
  SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=130 SANSWEEP_SHARDS=4 STEPS=sansweep timeout 150 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1
  echo "sansweep rc=$? $(el)"; grep -h "sanitizers over" $R/sa/summary.txt
  grep -h "ERROR SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c
}
