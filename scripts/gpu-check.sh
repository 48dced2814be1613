#!/usr/bin/env bash
# The GPU check, in one go: GPU tests (kernels and mutants), the CPU tests, compute-sanitizer
# memcheck over the GPU tests, and the default sweep. Leaves logs and reports in OUTDIR and
# ends with OUTDIR/summary.txt (commit, GPU, tests, mutants, sanitizer errors, headline GB/s).
#
#   scripts/gpu-check.sh OUTDIR
#
# Uses an existing build in ${BUILD_DIR:-build} (so a build made elsewhere can be carried to
# the GPU machine), building first only when the binaries are missing.
# SANITIZER_TIMEOUT (seconds, default 420) bounds the memcheck pass, WIDE_TIMEOUT (600) the
# wide step, STEP_TIMEOUT (300) each other step; a step cut short is reported as such in the
# summary (rc 124), never as clean.
# GTEST_FILTER narrows the GPU tests and PLUGIN_TESTS=0 leaves the plugin tests out, so the
# step can be split over device calls of limited length (the mutants caught, and their total,
# are then of the filter's tests alone).
# GPU_SHARDS (default 4) runs the GPU tests as that many processes at once, dealt by the times
# in GPU_TEST_TIMES (default reports/gpu-test-times.txt, refreshed from a step's logs by
# `scripts/balance_tests.py --times OUT/gpu-tests.*.log`) into shards of about equal time; an
# empty GPU_TEST_TIMES leaves the dealing to gtest's sharding (round robin).
# SANITIZER_FILTER (a gtest filter, default: all GPU tests) narrows the memcheck pass when
# device time is short; the summary names the filter used.
# BEFORE_BIN (a binary of an earlier commit) adds the step "same": both run one sweep of every
# op, built-in kernel, awkward H, distribution and layout, and scripts/same-results.py checks
# they agree on every key, verdict and error metric (a refactor must not change results).
# The step "strategies" times every built-in strategy on issue 11's headline shapes; the step
# "sansweep" runs the sanitizers over a tool sweep of the built-in strategies.
# The step "bisect" runs the README's bisect examples (auto vs cudnn; a mutant, replayed).
# The step "vendor" runs the vendor headline (fwd and bwd, bf16 M=16384, H 1024..16384 with
# 4097; auto, cudnn, cublas side by side) and cuDNN's every engine on one case.
# The step "wide" runs the GPU test of tensors past 2^31 elements and 4 GiB (--preset wide:
# every built-in kernel passes, mutant-offset-32bit is caught) alone, after the GPU tests: a
# case takes up to 34 GiB of device memory and 26 GiB of host memory, too much beside the
# shards, which leave it out.
# STEPS (default: all of "gpu sanitizer wide cpu sweep quick scaleout") runs some steps only, so a
# check can be split over several sessions of a time-limited machine: each step leaves its
# results in OUTDIR/state/STEP.env and the summary is written from every step recorded in
# OUTDIR so far. gpu and sanitizer, when both run, run at the same time (neither is timed).
# Exit status: 0 when every step recorded in OUTDIR passed (the summary's "steps" line names
# those that passed, failed and did not run), 1 when one failed or none is recorded, 2 for an
# unknown step in STEPS, a SANSWEEP_SHARDS that is not a whole number from 1, or a build that
# failed. STEPS=summary writes the summary alone. vendor,
# strategies and bisect measure and show; they pass when they ran.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${1:?usage: scripts/gpu-check.sh OUTDIR}
BUILD=${BUILD_DIR:-build}
BEFORE_BIN=${BEFORE_BIN:-build-before/rmsnorm-bench}
SANITIZER_TIMEOUT=${SANITIZER_TIMEOUT:-420}
# A device fault is what a sanitizer reports; the wide tensors (up to 34 GiB a case) have a step of their own.
SANITIZER_FILTER=${SANITIZER_FILTER:-*-DeviceFault.*:WideTensors.*}
STEP_TIMEOUT=${STEP_TIMEOUT:-300}  # bounds each of the other steps
# The wide step's own bound: --preset wide's 60 cases, up to 34 GiB each (its first 20, bf16
# H=4096, took 58 s on an H100; fp32's take twice the bytes).
WIDE_TIMEOUT=${WIDE_TIMEOUT:-600}
STEPS=" ${STEPS:-gpu sanitizer wide cpu sweep quick scaleout} "
ALL_STEPS="gpu sanitizer wide cpu sweep quick scaleout same vendor sansweep strategies bisect"
# "summary" runs nothing: it writes the summary and the exit status from what OUTDIR holds (a
# check split over calls, each call's state/ copied into one OUTDIR).
for step in $STEPS; do
  [[ " $ALL_STEPS summary " == *" $step "* ]] ||
    { echo "gpu-check: STEPS: unknown step '$step' (steps: $ALL_STEPS summary)" >&2; exit 2; }
done
# SANSWEEP_SHARDS (the step sansweep's processes a sweep), checked before anything runs.
SANSWEEP_SHARDS=${SANSWEEP_SHARDS:-1}
[[ "$SANSWEEP_SHARDS" =~ ^[1-9][0-9]*$ ]] ||
  { echo "gpu-check: SANSWEEP_SHARDS: '$SANSWEEP_SHARDS' is not a whole number from 1" >&2; exit 2; }
mkdir -p "$OUT"
BIN=$BUILD/rmsnorm-bench
GPU_TESTS=$BUILD/tests/rb_gpu_tests
CPU_TESTS=$BUILD/tests/rb_cpu_tests
# The plugin tests have binaries of their own (a loaded plugin stays registered in-process).
GPU_PLUGIN_TESTS=$BUILD/tests/rb_gpu_plugin_tests
CPU_PLUGIN_TESTS=$BUILD/tests/rb_cpu_plugin_tests
mkdir -p "$OUT/state"
want() { [[ "$STEPS" == *" $1 "* ]]; }
if [ -f .gpu/bundle.tar.xz ] && [ ! -x "$BIN" ]; then tar xJf .gpu/bundle.tar.xz; fi  # scripts/pack-gpu.sh
# Build only when a binary the chosen steps run is missing (the tool alone for the steps that
# run only the tool, such as scaleout or sweep).
need=("$BIN")
if want gpu || want sanitizer || want wide; then need+=("$GPU_TESTS"); fi
if want cpu; then need+=("$CPU_TESTS"); fi
for b in "${need[@]}"; do [ -x "$b" ] || { scripts/build.sh || exit 2; break; }; done
# save STEP VAR...: records the variables of a finished step for the summary.
save() { local step=$1; shift; : >"$OUT/state/$step.env"; for v in "$@"; do printf '%s=%q\n' "$v" "${!v}" >>"$OUT/state/$step.env"; done; }
stamp() { date -u +%H:%M:%S; }
commit=$("$BIN" --version | sed -n 's/.*commit=//p')
gpu=$(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)
echo "[$(stamp)] gpu-check: commit=$commit gpu=$gpu"

# ended WHAT LOG...: the names of the tests gtest ended as WHAT (OK, FAILED, SKIPPED, or an ERE
# alternation of them) in the logs given, by each test's own closing line ("[       OK ]
# Suite.Name (12 ms)", a parameterized test's FAILED line with ", where GetParam() = ..." before
# the time; the summary's list of failed tests, which has no time, is not read
# again), so a process cut short still names the tests it finished: its "[  PASSED  ] N
# tests." never comes (98d8691's step, cut at 480 s, said passed=82 by those lines where its
# logs held 104 passed). count WHAT LOG...: how many.
ended() {
  local what=$1; shift
  cat "$@" 2>/dev/null | sed -nE "s/^\[ +($what) +\] ([^ ,]+)(, where .*)? \([0-9]+ ms\)\$/\2/p"
}
count() { ended "$@" | grep -c .; }
# sharded NAME SHARDS CMD...: runs CMD as SHARDS processes at once, logs in OUT/NAME.K.log;
# returns the worst exit status. Each process has gtest's sharding variables (a gtest binary
# then runs every SHARDS-th test) and every @K@ in CMD replaced by its index K (the tool's
# `--shard @K@/SHARDS` runs every SHARDS-th case). The validation tests and the sanitized
# sweeps spend much of their time on the host (inputs, fp64 reference, the sanitizer's own
# work), so shards on one GPU finish sooner; none of them is timed.
sharded() {
  local name=$1 shards=$2 k rc=0 r; shift 2
  local pids=()
  for ((k = 0; k < shards; k++)); do
    GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$k "${@//@K@/$k}" >"$OUT/$name.$k.log" 2>&1 &
    pids+=($!)
  done
  for k in "${!pids[@]}"; do wait "${pids[$k]}"; r=$?; [ "$r" -gt "$rc" ] && rc=$r; done
  return "$rc"
}
GPU_SHARDS=${GPU_SHARDS:-4}
GPU_TEST_TIMES=${GPU_TEST_TIMES-reports/gpu-test-times.txt}
# balanced_bins LIST: the tests of LIST (the test binary's --gtest_list_tests output) dealt
# into GPU_SHARDS shards of about equal time by GPU_TEST_TIMES (scripts/balance_tests.py), a
# gtest filter a line; fails without a times file or a test list.
balanced_bins() {
  [ -n "$GPU_TEST_TIMES" ] && [ -f "$GPU_TEST_TIMES" ] && [ -s "$1" ] || return 1
  python3 scripts/balance_tests.py "$1" "$GPU_TEST_TIMES" "$GPU_SHARDS"
}
# san_errors LOG...: compute-sanitizer's errors summed over its processes' logs: one "ERROR
# SUMMARY: N errors" (racecheck: "RACECHECK SUMMARY: ... (N errors, ...") each; "unknown" when
# a log has none (that process did not finish).
san_errors() {
  local n=0 f v
  for f in "$@"; do
    v=$(sed -n -e 's/.*ERROR SUMMARY: \([0-9]*\) error.*/\1/p' -e 's/.*RACECHECK SUMMARY: .*(\([0-9]*\) error.*/\1/p' "$f" | tail -n 1)
    [ -n "$v" ] || { echo unknown; return; }
    n=$((n + v))
  done
  echo "$n"
}
# san_run TOOL SECONDS CMD...: CMD under compute-sanitizer's TOOL, CMD stopped after SECONDS by
# a timeout inside the sanitizer, not around it: the signal reaches CMD, which ends as it does on
# an interrupt (the tool keeps its finished rows and prints its counts), and the sanitizer, still
# alive, prints its summary of what it saw until then. With the timeout around it (to 98d8691)
# a cut process left "errors=unknown" and counts printed after the sweep had summed them (H100,
# 2026-12-06: 4 of the rows sweep's 48 passes counted). Exits 124 when the timeout ended CMD;
# an outer timeout 60 s later ends a sanitizer that does not return.
san_run() {
  local tool=$1 secs=$2; shift 2
  timeout -k 30 $((secs + 60)) compute-sanitizer --tool "$tool" --target-processes all --print-limit 20 \
    timeout "$secs" "$@"
}
# tally LOG...: the tool's closing counts ("N pass, N fail, N skip, N error") summed over the
# logs of a sweep's shards (a shard cut short by a signal still prints what it finished).
tally() {
  local f
  for f in "$@"; do grep -E '^[0-9]+ pass, [0-9]+ fail, [0-9]+ skip, [0-9]+ error' "$f" | tail -n 1; done |
    awk '{ p += $1; f += $3; s += $5; e += $7 } END { printf "%d pass, %d fail, %d skip, %d error", p, f, s, e }'
}

# compute-sanitizer's tools: memcheck over SANITIZER_FILTER, the others (racecheck,
# initcheck, synccheck) over SANITIZER_EXTRA_FILTER (default: the same), each sharded like
# the GPU tests, each with its own error count in the summary.
SANITIZER_TOOLS=${SANITIZER_TOOLS:-memcheck racecheck initcheck synccheck}
SANITIZER_EXTRA_FILTER=${SANITIZER_EXTRA_FILTER:-$SANITIZER_FILTER}
run_sanitizer() {
  local tool filter v r
  san_rc=0
  san_state=""
  san_pass=0
  for tool in $SANITIZER_TOOLS; do
    filter=$SANITIZER_FILTER
    [ "$tool" = memcheck ] || filter=$SANITIZER_EXTRA_FILTER
    echo "[$(stamp)] compute-sanitizer $tool over '$filter', $GPU_SHARDS shards (timeout ${SANITIZER_TIMEOUT}s)"
    san_run "$tool" "$SANITIZER_TIMEOUT" "$GPU_PLUGIN_TESTS" \
      --gtest_filter="$filter" >"$OUT/san-$tool.plugin.log" 2>&1 &
    local plugin_pid=$!
    sharded "san-$tool" "$GPU_SHARDS" san_run "$tool" "$SANITIZER_TIMEOUT" "$GPU_TESTS" --gtest_filter="$filter"
    r=$?
    wait "$plugin_pid"
    v=$?; [ "$v" -gt "$r" ] && r=$v
    [ "$r" -gt "$san_rc" ] && san_rc=$r
    local errors
    errors=$(san_errors "$OUT"/san-"$tool".*.log)
    if [ "$r" -eq 124 ]; then state="cut short after ${SANITIZER_TIMEOUT}s"; else state="rc=$r"; fi
    san_state="$san_state $tool: $state errors=$errors;"
    san_pass=$((san_pass + $(count OK "$OUT"/san-"$tool".*.log)))
    [ "$errors" = 0 ] || san_errors_bad=1
    echo "[$(stamp)] $tool $state errors=$errors"
  done
  san_errors=$([ -n "${san_errors_bad:-}" ] && echo nonzero || echo 0)
  san_filter="memcheck '$SANITIZER_FILTER', others '$SANITIZER_EXTRA_FILTER'"
  save sanitizer san_rc san_errors san_state san_pass san_filter
}
san_pid=
if want sanitizer && want gpu; then run_sanitizer & san_pid=$!; fi

if want gpu; then
  echo "[$(stamp)] GPU tests, $GPU_SHARDS shards"
  # Every GPU test but the wide one (the step "wide"); a GTEST_FILTER given narrows them further.
  gpu_filter=${GTEST_FILTER:-*}
  case $gpu_filter in *-*) gpu_filter="$gpu_filter:WideTensors.*" ;; *) gpu_filter="$gpu_filter-WideTensors.*" ;; esac
  # The plugin tests run beside the shards, not after them, so the step ends within one
  # STEP_TIMEOUT (after them it took 600 s and more on an H100, 2026-12-05: a device call's
  # limit). PLUGIN_TESTS=0 leaves them out, for a step split over calls by GTEST_FILTER.
  plugin_pid=
  if [ "${PLUGIN_TESTS:-1}" != 0 ]; then
    timeout "$STEP_TIMEOUT" "$GPU_PLUGIN_TESTS" >"$OUT/gpu-tests.plugin.log" 2>&1 &
    plugin_pid=$!
  fi
  # With GPU_TEST_TIMES (default reports/gpu-test-times.txt: each test's seconds in an earlier
  # run) the shards are balanced_bins': about equal time each (gtest's round robin left them
  # 188-412 s on an H100, 2026-12-06, where 325 s each was the even split), each shard its
  # tests by a flag file; without it, or where listing the tests fails, gtest's own sharding.
  # Balanced, the step did not end sooner (H100, 98d8691, 2026-12-06, memcheck's sansweep
  # beside it): 90 of the 98 tests ended in its 480 s, their times summing to 6246 s where the
  # same tests took 4527 s at 9fed436 (round robin, also beside memcheck), all 16 processes
  # sharing the GPU to the end (a third sansweep, clusters, beside them too). The step is bound
  # by the GPU's throughput; balance helps only a step whose shards end unevenly for lack of
  # work, not one the GPU is saturated through.
  # The tests the filter selects, listed once: for the shards and for the mutants' count.
  "$GPU_TESTS" --gtest_list_tests --gtest_filter="$gpu_filter" >"$OUT/gpu-test-list.txt" 2>"$OUT/gpu-shards.err" ||
    : >"$OUT/gpu-test-list.txt"
  if balanced_bins "$OUT/gpu-test-list.txt" >"$OUT/gpu-shards.txt" 2>>"$OUT/gpu-shards.err"; then
    n_bins=0
    while IFS= read -r bin; do
      echo "--gtest_filter=$bin" >"$OUT/gpu-shard.$n_bins.flags"
      n_bins=$((n_bins + 1))
    done <"$OUT/gpu-shards.txt"
    echo "[$(stamp)] $n_bins shards balanced by $GPU_TEST_TIMES"
    sharded gpu-tests "$n_bins" env -u GTEST_TOTAL_SHARDS -u GTEST_SHARD_INDEX timeout "$STEP_TIMEOUT" "$GPU_TESTS" \
      --gtest_flagfile="$OUT/gpu-shard.@K@.flags"
  else
    sharded gpu-tests "$GPU_SHARDS" timeout "$STEP_TIMEOUT" "$GPU_TESTS" --gtest_filter="$gpu_filter"
  fi
  gpu_rc=$?
  if [ -n "$plugin_pid" ]; then wait "$plugin_pid"; r=$?; [ "$r" -gt "$gpu_rc" ] && gpu_rc=$r; fi
  gpu_pass=$(count OK "$OUT"/gpu-tests.*.log); gpu_fail=$(count FAILED "$OUT"/gpu-tests.*.log)
  gpu_skip=$(count SKIPPED "$OUT"/gpu-tests.*.log)
  # The listed tests that no shard ended (a step cut short), by name in OUT/gpu-unfinished.txt
  # (a GTEST_FILTER for a step of their own, joined by ':'): the test list against the shards'
  # closing lines (the plugin tests, which are not in the list, left out).
  awk '/^[^ ]/ { suite = $1 } /^  / { print suite $1 }' "$OUT/gpu-test-list.txt" | sort |
    comm -23 - <(ended 'OK|FAILED|SKIPPED' "$OUT"/gpu-tests.[0-9]*.log | sort -u) >"$OUT/gpu-unfinished.txt"
  if grep -q '^  ' "$OUT/gpu-test-list.txt"; then gpu_unfinished=$(wc -l <"$OUT/gpu-unfinished.txt"); else gpu_unfinished=unknown; fi
  # The numerics mutants these tests run: the MutantCaught tests the filter selects (the test
  # binary's own list, so the device faults, which have tests of their own, and the wide
  # step's mutants, which have no MutantCaught test, are never counted by name here).
  mutants_total=$(awk '/^[^ ]/ { suite = $1 } /^  / && suite == "AllMutants/MutantCaught." { n++ } END { print n + 0 }' "$OUT/gpu-test-list.txt")
  mutants_caught=$(cat "$OUT"/gpu-tests.*.log | grep -c '^MUTANT .* caught by [1-9]')
  plugin_mutants=$(cat "$OUT"/gpu-tests.*.log | grep '^PLUGIN MUTANT' | tr '\n' ';')
  save gpu gpu_rc gpu_pass gpu_fail gpu_skip gpu_unfinished mutants_total mutants_caught plugin_mutants
  echo "[$(stamp)] GPU tests rc=$gpu_rc passed=${gpu_pass:-0} failed=${gpu_fail:-0} skipped=${gpu_skip:-0} unfinished=$gpu_unfinished mutants=$mutants_caught/$mutants_total"
fi

if want wide; then
  echo "[$(stamp)] wide tensors (alone): WideTensors.*"
  timeout "$WIDE_TIMEOUT" "$GPU_TESTS" --gtest_filter='WideTensors.*' >"$OUT/wide-tests.log" 2>&1
  wide_rc=$?
  wide_cases=$(grep -c '^WIDE ' "$OUT/wide-tests.log")
  wide_pass=$(grep -c '^WIDE .*: pass' "$OUT/wide-tests.log")
  wide_mutant=$(grep -h '^MUTANT ' "$OUT/wide-tests.log" | tr '\n' ' ')
  save wide wide_rc wide_cases wide_pass wide_mutant
  echo "[$(stamp)] wide tensors rc=$wide_rc: $wide_pass of $wide_cases cases pass; $wide_mutant"
fi

if want cpu; then
  echo "[$(stamp)] CPU tests"
  timeout "$STEP_TIMEOUT" "$CPU_TESTS" >"$OUT/cpu-tests.log" 2>&1
  cpu_rc=$?
  timeout "$STEP_TIMEOUT" "$CPU_PLUGIN_TESTS" >"$OUT/cpu-plugin-tests.log" 2>&1
  r=$?; [ "$r" -gt "$cpu_rc" ] && cpu_rc=$r
  cpu_pass=$(count OK "$OUT/cpu-tests.log" "$OUT/cpu-plugin-tests.log")
  cpu_fail=$(count FAILED "$OUT/cpu-tests.log" "$OUT/cpu-plugin-tests.log")
  save cpu cpu_rc cpu_pass cpu_fail
  echo "[$(stamp)] CPU tests rc=$cpu_rc passed=${cpu_pass:-0} failed=${cpu_fail:-0}"
fi

if [ -n "$san_pid" ]; then wait "$san_pid"; elif want sanitizer; then run_sanitizer; fi

if want sweep; then
  echo "[$(stamp)] default sweep"
  timeout "$STEP_TIMEOUT" "$BIN" --out "$OUT/sweep" >"$OUT/sweep.log" 2>"$OUT/sweep.err"
  sweep_rc=$?
  sweep_line=$(grep -E '^[0-9]+ pass' "$OUT/sweep.log" | tail -n 1)
  echo "[$(stamp)] sweep rc=$sweep_rc"
  # Headline per op: auto, bf16 (w and residual bf16), M=16384, per H: GB/s and % of copy
  # (best over eps).
  copy=$(sed -n 's/^copy ceiling: \([0-9]*\) GB.*/\1/p' "$OUT/sweep.err" | head -n 1)
  headline="copy ceiling ${copy:-?} GB/s"
  for op in fwd bwd add add-bwd; do
    line=$(awk -F, -v op="$op" 'NR==1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
      $c["kernel"] == "auto" && $c["op"] == op && $c["dtype"] == "bf16" && $c["wdtype"] == "bf16" &&
      $c["M"] == 16384 && $c["status"] == "pass" {
        h = $c["H"]; if (!(h in g) || $c["gbps"] + 0 > g[h] + 0) { g[h] = $c["gbps"]; p[h] = $c["pct_of_copy"]; k[h] = $c["picked"] } }
      END { for (h in g) printf "%d H=%s %.0f GB/s %.1f%% (%s);\n", h, h, g[h], p[h], k[h] }' \
      "$OUT/sweep/results.csv" 2>/dev/null | sort -n | cut -d' ' -f2- | tr '\n' ' ')
    headline="$headline
headline $op (auto bf16 M=16384): $line"
  done
  save sweep sweep_rc sweep_line headline
fi

if want quick; then
  echo "[$(stamp)] README quick start: scripts/run.sh --H 4096 --dtype bf16"
  RB_SKIP_BUILD=1 BUILD_DIR="$BUILD" timeout "$STEP_TIMEOUT" scripts/run.sh --H 4096 --dtype bf16 --out "$OUT/h4096" \
    >"$OUT/h4096.log" 2>&1
  quick_rc=$?
  quick_line=$(grep -E '^[0-9]+ pass' "$OUT/h4096.log" | tail -n 1)
  save quick quick_rc quick_line
  echo "[$(stamp)] quick start rc=$quick_rc"
fi

if want same; then
  echo "[$(stamp)] same results as $BEFORE_BIN"
  SAME=(--op fwd,bwd,add,add-bwd --H 1,127,4096,4097 --M 1,19 --dtype fp32,fp16,bf16 --wdtype same,fp32
        --rdtype same,fp32 --dist normal,tiny,offset,zero-row --layout contiguous,strided,misaligned
        --kernel naive,warp-row,row-vector,chunked,auto --no-time --quiet)
  timeout "$STEP_TIMEOUT" "$BEFORE_BIN" "${SAME[@]}" --out "$OUT/same/before" >"$OUT/same-before.log" 2>&1
  timeout "$STEP_TIMEOUT" "$BIN" "${SAME[@]}" --out "$OUT/same/after" >"$OUT/same-after.log" 2>&1
  python3 scripts/same-results.py "$OUT/same/before/results.csv" "$OUT/same/after/results.csv" >"$OUT/same.log" 2>&1
  same_rc=$?
  same_line=$(tail -n 1 "$OUT/same.log")
  save same same_rc same_line
  echo "[$(stamp)] same results rc=$same_rc: $same_line"
fi

if want vendor; then
  echo "[$(stamp)] vendor headline"
  VH=(--op fwd,bwd --H 1024,2048,4096,4097,8192,16384 --M 16384 --dtype bf16 --eps 1e-5 --kernel auto,cudnn,cublas)
  timeout "$STEP_TIMEOUT" "$BIN" "${VH[@]}" --out "$OUT/vendor" >"$OUT/vendor.log" 2>"$OUT/vendor.err"
  vendor_rc=$?
  vendor_line=$(grep -E '^[0-9]+ pass' "$OUT/vendor.log" | tail -n 1)
  timeout "$STEP_TIMEOUT" "$BIN" --op fwd,bwd --H 4096 --M 16384 --dtype bf16 --eps 1e-5 --kernel cudnn \
    --cudnn-engines all --out "$OUT/engines" >"$OUT/engines.log" 2>&1
  engines_rc=$?
  engines_line=$(grep -E '^[0-9]+ pass' "$OUT/engines.log" | tail -n 1)
  save vendor vendor_rc vendor_line engines_rc engines_line
  echo "[$(stamp)] vendor rc=$vendor_rc ($vendor_line), engines rc=$engines_rc ($engines_line)"
fi

# The README's bisect example: auto against cudnn at bf16 H=4096 and 4097, and a mutant
# against auto with its reproducer replayed (output in OUT/bisect-*.log, reproducers in
# OUT/bisect-*/).
if want bisect; then
  echo "[$(stamp)] bisect examples"
  bisect_rcs=""
  for h in 4096 4097; do
    timeout "$STEP_TIMEOUT" "$BIN" bisect --kernel auto --against cudnn --dtype bf16 --M 256 --H "$h" \
      --out "$OUT/bisect-cudnn-$h" --plots >"$OUT/bisect-cudnn-$h.log" 2>&1
    bisect_rcs="$bisect_rcs cudnn-H$h=$?"
  done
  timeout "$STEP_TIMEOUT" "$BIN" bisect --kernel mutant-tail-load --against auto --dtype bf16 --M 64 --H 4097 \
    --out "$OUT/bisect-tail-load" >"$OUT/bisect-tail-load.log" 2>&1
  bisect_rcs="$bisect_rcs tail-load=$?"
  timeout "$STEP_TIMEOUT" "$BIN" bisect --replay "$OUT/bisect-tail-load" >"$OUT/bisect-replay.log" 2>&1
  bisect_rcs="$bisect_rcs replay=$?"
  bisect_line=$(grep -h 'Stage where they part' "$OUT"/bisect-*.log | sed 's/\*\*//g' | tr '\n' ' ')
  save bisect bisect_rcs bisect_line
  echo "[$(stamp)] bisect:$bisect_rcs"
fi

# compute-sanitizer over a tool sweep instead of the GPU tests (much faster: no validation
# sweeps under the tool): each of SANITIZER_TOOLS over SANSWEEP_ARGS (default: the built-in
# strategies, every op, H 1/127/4097/16384/32768, M 1 and 3, bf16 and fp32, contiguous,
# misaligned and skewed rows, checked, untimed; empty skips it), then over SANSWEEP_ROWS_ARGS
# (default: the backward's persistent grids at M=100003, H 127 and 1000, past one wave, so each
# block's rows follow one another through its ring and partial row; empty skips it), then over
# SANSWEEP_CLUSTER_ARGS (default: rows of 65536, every op, bf16 and fp32, contiguous and
# misaligned, at M=300: more rows than resident clusters, so the cluster kernels' rows follow
# one another through their rings; the two sweeps before never reach them, and perf-notes run
# 56's overrun of a cluster block's ring showed only in the GPU tests; empty skips it), each
# with its own SANITIZER_TIMEOUT and an error count per tool and sweep in the summary.
# SANSWEEP_SHARDS (default 1) runs each sweep as that many processes at once, each under its
# own sanitizer with the tool's --shard K/N (logs OUT/NAME.K.log, rows OUT/NAME/shards/K), their
# CSVs merged into OUT/NAME/results.csv and their errors and counts summed: on an H100 (2026-12-06) initcheck got through 11 of the rows
# sweep's 128 cases in 400 s as one process, racecheck through 59 in 225 s.
if want sansweep; then
  SANSWEEP_ARGS=${SANSWEEP_ARGS---kernel warp-row,row-vector,chunked,staged,auto --op fwd,add,bwd,add-bwd --H 1,127,4097,16384,32768 --M 1,3 --dtype bf16,fp32 --layout contiguous,misaligned,skewed --no-time --quiet}
  SANSWEEP_ROWS_ARGS=${SANSWEEP_ROWS_ARGS-"--kernel row-vector,chunked,staged,auto --op bwd,add-bwd --H 127,1000 --M 100003 --dtype bf16,fp32 --layout contiguous,skewed --no-time --quiet"}
  # The tool's own limit on one kernel's wait (--kernel-timeout, 60 s by default) is off under
  # the sanitizers (0 = none; SANITIZER_TIMEOUT bounds the sweep): racecheck ran staged's fp32
  # backward at M=100003 H=1000 past 60 s (H100, 2026-12-06), and the tool stopped its sweep
  # there with an error row for a kernel that was only slow.
  SANITIZER_KERNEL_TIMEOUT=${SANITIZER_KERNEL_TIMEOUT:-0}
  SANSWEEP_CLUSTER_ARGS=${SANSWEEP_CLUSTER_ARGS-"--kernel row-vector,chunked,auto --op fwd,add,bwd,add-bwd --H 65536 --M 300 --dtype bf16,fp32 --layout contiguous,misaligned --eps 1e-5 --no-time --quiet"}
  ss_state="" ss_bad=0
  for tool in $SANITIZER_TOOLS; do
    for sweep in main rows clusters; do
      case $sweep in
        main) args=$SANSWEEP_ARGS name=sansweep-$tool label=$tool ;;
        rows) args=$SANSWEEP_ROWS_ARGS name=sansweep-rows-$tool label="$tool at many rows" ;;
        clusters) args=$SANSWEEP_CLUSTER_ARGS name=sansweep-clusters-$tool label="$tool over clusters" ;;
      esac
      [ -n "$args" ] || continue
      n=$SANSWEEP_SHARDS
      echo "[$(stamp)] compute-sanitizer $tool over a tool sweep ($sweep, $n process(es)): $args"
      # shellcheck disable=SC2086
      sharded "$name" "$n" san_run "$tool" "$SANITIZER_TIMEOUT" \
        "$BIN" $args --kernel-timeout "$SANITIZER_KERNEL_TIMEOUT" --shard "@K@/$n" --out "$OUT/$name/shards/@K@"
      r=$?
      logs=()
      for ((k = 0; k < n; k++)); do logs+=("$OUT/$name.$k.log"); done
      # The shards' rows in one CSV (a shard cut short left only its .partial file: merged from
      # what finished, the cut shown by rc and the counts).
      csvs=("$OUT/$name"/shards/*/results.csv)
      [ -e "${csvs[0]}" ] && "$BIN" merge "${csvs[@]}" -o "$OUT/$name/results.csv" >"$OUT/$name.merge.log" 2>&1
      v=$(san_errors "${logs[@]}")
      ss_state="$ss_state $label: rc=$r errors=$v ($(tally "${logs[@]}")$([ "$n" = 1 ] || echo ", $n processes"));"
      [ "$r" = 0 ] && [ "$v" = 0 ] || ss_bad=1
      echo "[$(stamp)] $label rc=$r errors=$v"
    done
  done
  save sansweep ss_state ss_bad
fi

# Every built-in strategy side by side on the headline shapes of issue 11 (bf16, the group
# "fp32" in fp32; eps 1e-5,
# --no-check: the GPU tests validate each strategy; this step only times them), one tool call
# per group (each measures its copy ceiling), merged into OUT/strategies.csv and tabulated
# (% of copy; graph-replay µs for M=1) in OUT/strategies.txt.
if want strategies; then
  echo "[$(stamp)] strategies side by side"
  ST=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
  st_rcs=""
  st_run() {
    local name=$1; shift
    local dtype=bf16
    [ "$name" = fp32 ] && dtype=fp32
    timeout "$STEP_TIMEOUT" "$BIN" "${ST[@]}" --dtype "$dtype" "$@" --out "$OUT/strategies/$name" >"$OUT/strategies-$name.log" 2>&1
    st_rcs="$st_rcs $name=$?"
  }
  st_run bwd --op bwd,add-bwd --M 16384 --H 1024,2048,4096,4097,8192,16384 --kernel row-vector,chunked,staged,auto
  st_run fwd --op fwd --M 16384 --H 1024,4096,4097,8192,16384,32768 --kernel chunked,row-vector,auto
  st_run wide --op fwd --M 1024 --H 65536,131072 --kernel chunked,auto
  st_run narrow --op fwd --M 65536 --H 128 --kernel warp-row,chunked,row-vector,auto
  st_run fp32 --op fwd --M 16384 --H 4096,8192 --kernel chunked,row-vector,auto
  st_run decode --op fwd,add,bwd --M 1 --H 1024,4096 --kernel chunked,row-vector,staged,auto
  "$BIN" merge "$OUT"/strategies/*/results.csv -o "$OUT/strategies.csv" >/dev/null 2>&1
  python3 - "$OUT/strategies.csv" >"$OUT/strategies.txt" 2>&1 <<'PY'
import csv, sys
rows = [r for r in csv.DictReader(open(sys.argv[1], newline="")) if r["status"] == "pass"]
keys = sorted({(r["op"], r["dtype"], int(r["M"]), int(r["H"])) for r in rows})
for op, dtype, M, H in keys:
    cells = []
    for r in rows:
        if (r["op"], r["dtype"], int(r["M"]), int(r["H"])) != (op, dtype, M, H):
            continue
        v = f'{float(r["graph_us"]):.2f}us' if M == 1 and r.get("graph_us") else f'{float(r["pct_of_copy"]):.1f}%'
        cells.append(f'{r["kernel"]}{"(" + r["picked"] + ")" if r["kernel"] == "auto" else ""} {v}')
    print(f"{op} {dtype} M={M} H={H}: " + ", ".join(cells))
PY
  st_line=$(tr '\n' ';' <"$OUT/strategies.txt")
  save strategies st_rcs st_line
  echo "[$(stamp)] strategies:$st_rcs"
fi

# Scale-out: the same small sweep whole and as 2 shards merged must compare clean; the gate
# must pass against a fresh baseline and fail against one whose bandwidth is raised by 20%.
if want scaleout; then
echo "[$(stamp)] scale-out: shards, merge, compare, ci-gate"
SO=(--op fwd --H 4096,8192 --M 16384 --dtype bf16 --eps 1e-5 --quiet)
{
  "$BIN" "${SO[@]}" --out "$OUT/so/whole" >/dev/null
  "$BIN" "${SO[@]}" --shard 0/2 --out "$OUT/so/shard0" >/dev/null
  "$BIN" "${SO[@]}" --shard 1/2 --out "$OUT/so/shard1" >/dev/null
  "$BIN" merge "$OUT/so/shard0/results.csv" "$OUT/so/shard1/results.csv" -o "$OUT/so/merged.csv"
  "$BIN" compare "$OUT/so/whole/results.csv" "$OUT/so/merged.csv" --md "$OUT/so/compare.md"
  echo "compare whole vs 2 shards merged: rc=$?"
  RB_SKIP_BUILD=1 BUILD_DIR="$BUILD" scripts/ci-gate.sh --baseline "$OUT/so/whole/results.csv" --out "$OUT/so/gate-fresh" -- "${SO[@]}"
  echo "ci-gate against a fresh baseline: rc=$?"
  # A baseline 20% faster, as a run would have written it (scripts/scale-times.py).
  python3 scripts/scale-times.py "$OUT/so/whole/results.csv" "$OUT/so/raised.csv" 1.2
  RB_SKIP_BUILD=1 BUILD_DIR="$BUILD" scripts/ci-gate.sh --baseline "$OUT/so/raised.csv" --out "$OUT/so/gate-raised" -- "${SO[@]}"
  echo "ci-gate against the baseline raised by 20%: rc=$?"
} >"$OUT/scaleout.log" 2>&1
so_compare=$(sed -n 's/^compare whole vs 2 shards merged: rc=//p' "$OUT/scaleout.log")
so_fresh=$(sed -n 's/^ci-gate against a fresh baseline: rc=//p' "$OUT/scaleout.log")
so_raised=$(sed -n 's/^ci-gate against the baseline raised by 20%: rc=//p' "$OUT/scaleout.log")
save scaleout so_compare so_fresh so_raised
echo "[$(stamp)] scale-out: shards-vs-whole compare rc=$so_compare, gate fresh rc=$so_fresh, gate raised rc=$so_raised"
fi

# The summary, from every step recorded in OUT (this run's and earlier ones').
for f in "$OUT"/state/*.env; do [ -e "$f" ] && . "$f"; done
# step_ok STEP: whether a recorded step passed. vendor, strategies and bisect only measure and
# show (their rows are in their own files); they pass when they ran.
step_ok() {
  case $1 in
    gpu) [ "${gpu_rc:-1}" = 0 ] ;;
    sanitizer) [ "${san_errors:-1}" = 0 ] && [ "${san_rc:-124}" -ne 124 ] ;;
    wide) [ "${wide_rc:-1}" = 0 ] ;;
    cpu) [ "${cpu_rc:-1}" = 0 ] ;;
    sweep) [ "${sweep_rc:-1}" = 0 ] ;;
    quick) [ "${quick_rc:-1}" = 0 ] ;;
    scaleout) [ "${so_compare:-1}" = 0 ] && [ "${so_fresh:-1}" = 0 ] && [ "${so_raised:-0}" = 1 ] ;;
    same) [ "${same_rc:-1}" = 0 ] ;;
    sansweep) [ "${ss_bad:-1}" = 0 ] ;;
    *) true ;;
  esac
}
# The exit status: 0 when at least one step is recorded in OUT and every recorded step passed,
# so a check split over calls by STEPS (into one OUT or several) is judged by what ran; the
# summary's first lines name the steps that passed, failed and did not run.
steps_passed="" steps_failed="" steps_missing=""
for step in $ALL_STEPS; do
  if [ ! -e "$OUT/state/$step.env" ]; then steps_missing="$steps_missing $step"
  elif step_ok "$step"; then steps_passed="$steps_passed $step"
  else steps_failed="$steps_failed $step"; fi
done
{
  echo "commit=$commit"
  echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "gpu=$gpu"
  echo "steps passed:${steps_passed:- none}; failed:${steps_failed:- none}; not run:${steps_missing:- none}"
  echo "gpu_tests: rc=${gpu_rc:-not run} passed=${gpu_pass:-0} failed=${gpu_fail:-0} skipped=${gpu_skip:-0} unfinished=${gpu_unfinished:-?}"
  echo "mutants_caught=${mutants_caught:-0}/${mutants_total:-?}"
  echo "plugin: ${plugin_mutants:-not run}"
  echo "wide tensors (--preset wide, every op, built-in kernels): rc=${wide_rc:-not run}, ${wide_pass:-0} of ${wide_cases:-0} cases pass (mutants among them); ${wide_mutant:-}"
  echo "cpu_tests: rc=${cpu_rc:-not run} passed=${cpu_pass:-0} failed=${cpu_fail:-0}"
  echo "sanitizer ($SANITIZER_TOOLS; filters ${san_filter:-}):${san_state:- not run}; all clean: ${san_errors:-unknown}; gpu tests passed under them=${san_pass:-0}"
  echo "sweep: rc=${sweep_rc:-not run}, ${sweep_line:-}"
  echo "quick start (scripts/run.sh --H 4096 --dtype bf16): rc=${quick_rc:-not run}, ${quick_line:-}"
  echo "scale-out (fwd bf16 M=16384 H=4096,8192): whole vs 2 shards merged compare rc=${so_compare:-not run} (0 = clean); ci-gate fresh baseline rc=${so_fresh:-not run} (want 0), +20% baseline rc=${so_raised:-not run} (want 1)"
  echo "same results as ${BEFORE_BIN}: rc=${same_rc:-not run}, ${same_line:-}"
  echo "vendor headline (fwd,bwd bf16 M=16384; auto, cudnn, cublas): rc=${vendor_rc:-not run}, ${vendor_line:-}; cudnn every engine (H=4096): rc=${engines_rc:-not run}, ${engines_line:-}"
  echo "sanitizers over a tool sweep:${ss_state:- not run}"
  echo "strategies (bf16 but the fp32 group; % of copy, M=1: graph µs):${st_rcs:- not run} ${st_line:-}"
  echo "bisect (auto vs cudnn bf16 M=256 H=4096/4097; mutant-tail-load vs auto, replayed):${bisect_rcs:- not run} ${bisect_line:-}"
  echo "${headline:-headline: sweep not run}"
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
[ -n "$steps_passed" ] && [ -z "$steps_failed" ]
