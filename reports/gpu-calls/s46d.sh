#!/usr/bin/env bash
# Ran in session 46 as `bash reports/gpu-calls/planned/s46d.sh` (the fifth start of the session,
# naming nvidia-h200; got NVIDIA H100 80GB HBM3, driver 580.159.04), 2026-12-06 15:03 UTC, 157 s:
# 60 pass, auto the rule's pick on all 20 shapes; gpu_tests 2 of 2 (docs/perf-notes.md run 60, on the GPU).
# Planned in session 45 (2026-12-06): perf-notes run 60's change on the GPU (b969554 and
# the commit after it: auto's backward pick keyed by the rows' alignment, row-vector for shifted
# 16-bit add-bwd at every H within a block, and for shifted fp32 rows from 1.5 blocks' span to H
# of two blocks). Carries .gpu/s46d.tar.xz (the tool and GPU tests, stripped),
# unpacked as build/. Its kernels are 9fdb13a's (s46a.sh checked them): only auto's pick moved.
# Written for what device time the session had left (about 280 s with the start), so the
# timing comes first and leaves its summary in $OUT before the tests:
#  1. alone: auto beside row-vector and chunked on the shapes whose pick changed (16-bit
#     add-bwd H 1025, 8193, 12289, 16377; misaligned 1024, 2048, 8192, 16384; bwd misaligned
#     16384; fp32 misaligned 8192 and 16384, fp32 8193 and 12289), M=16384, checked and timed: auto's `picked` and its % of
#     copy beside the two it picks between ($OUT/picks.txt);
#  2. auto's GPU tests: its bwd and add-bwd validation sweeps, 2 shards, bounded at 120 s.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/s46d.tar.xz || exit 9
machine
T=(--kernel auto,row-vector,chunked --M 16384 --eps 1e-5 --quiet)
{
  timeout 50 build/rmsnorm-bench "${T[@]}" --op add-bwd --dtype bf16 --H 1025,8193,12289,16377 --out $R/t1
  timeout 50 build/rmsnorm-bench "${T[@]}" --op add-bwd,bwd --dtype bf16 --H 1024,2048,8192,16384 --layout misaligned --out $R/t2
  timeout 40 build/rmsnorm-bench "${T[@]}" --op add-bwd,bwd --dtype fp32 --H 8192,16384 --layout misaligned --out $R/t3
  timeout 40 build/rmsnorm-bench "${T[@]}" --op add-bwd,bwd --dtype fp32 --H 8193,12289 --out $R/t4
} >$R/t.log 2>&1
echo "timing done $(el)"; grep -h "pass, " $R/t.log
python3 - $R/t1/results.csv $R/t2/results.csv $R/t3/results.csv $R/t4/results.csv <<'PY' | tee $OUT/picks.txt
import csv, sys
rows = {}
for f in sys.argv[1:]:
    for r in csv.DictReader(open(f)):
        rows.setdefault((r['op'], r['dtype'], r['layout'], int(r['H'])), {})[r['kernel']] = (r['picked'], r['status'], r['pct_of_copy'][:5])
print('op dtype layout H | auto (picked, status, % of copy) | row-vector | chunked')
for k in sorted(rows):
    print(*k, '|', rows[k].get('auto'), '|', rows[k].get('row-vector'), '|', rows[k].get('chunked'))
PY
F=AllKernels/KernelPasses.ValidationSweep/
GTEST_FILTER="${F}auto_bwd:${F}auto_add_bwd" PLUGIN_TESTS=0 GPU_SHARDS=2 GPU_TEST_TIMES= STEP_TIMEOUT=115 STEPS=gpu \
  timeout 120 scripts/gpu-check.sh $R/gc >$R/gc.log 2>&1
echo "gpu tests rc=$? $(el)"; grep -h "gpu_tests:" $R/gc/summary.txt; grep -h "^\[  FAILED\|^\[       OK \]" $R/gc/gpu-tests.*.log
tar cJf "$OUT/r.tar.xz" -C /tmp r
