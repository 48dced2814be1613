#!/usr/bin/env bash
# Session 33, call D: perf-notes run 51 (branch exp/s33-held): the decode passes at many rows,
# RB_X_HELD=1 against the same binary without it, two rounds; a checked run with the knob;
# Chunked.* of rb_gpu_tests without it (the refactored many-rows tests, 28ae013).
set -uo pipefail
T0=$(date +%s)
el() { echo "+$(( $(date +%s) - T0 ))s"; }
tar xJf .gpu/bundle.tar.xz || exit 9
build/rmsnorm-bench --version
F=(--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check --quiet)
C1=(--op add --kernel chunked --dtype bf16,fp32 --M 16384 --H 1024,2048,4096,8192,16384)
C2=(--op fwd --kernel chunked --dtype bf16,fp32 --M 16384 --H 1024,2048,4096,8192,16384)
C3=(--op add,fwd --kernel chunked --dtype bf16 --M 1024,4096 --H 2048,4096,8192)
for round in 1 2; do
  for b in off on; do
    if [ $b = on ]; then export RB_X_HELD=1; else unset RB_X_HELD; fi
    build/rmsnorm-bench "${F[@]}" "${C1[@]}" --out /tmp/t/$b$round/a >/dev/null 2>&1; echo "$b$round a rc=$?"
    build/rmsnorm-bench "${F[@]}" "${C2[@]}" --out /tmp/t/$b$round/b >/dev/null 2>&1; echo "$b$round b rc=$?"
    build/rmsnorm-bench "${F[@]}" "${C3[@]}" --out /tmp/t/$b$round/c >/dev/null 2>&1; echo "$b$round c rc=$?"
  done
done
unset RB_X_HELD
python3 scripts/ab_summary.py /tmp/t > $OUT/timings.txt
python3 - /tmp/t > $OUT/pct.txt <<'PY'
import csv, glob, os, sys
rows = {}
for f in sorted(glob.glob(os.path.join(sys.argv[1], "*", "*", "results.csv"))):
    tag = f.split(os.sep)[-3]
    for r in csv.DictReader(open(f)):
        rows.setdefault((r["op"], r["dtype"], r["M"], r["H"]), {})[tag] = r["pct_of_copy"]
print("op dtype M H | % of copy: " + " ".join(["off1", "on1", "off2", "on2"]))
for k, v in rows.items():
    print(" ".join(k), "|", " ".join(f"{float(v[t]):.1f}" if v.get(t) else "-" for t in ["off1", "on1", "off2", "on2"]))
PY
cat $OUT/pct.txt
echo "timings done $(el)"
RB_X_HELD=1 build/rmsnorm-bench --op add,fwd --kernel chunked --dtype bf16,fp16,fp32 --wdtype same,fp32 --M 300,16384 --H 1,127,1024,4096,4097,8192,16384 --layout contiguous,misaligned --no-time --quiet --out /tmp/t/check > /tmp/t/check.log 2>&1
echo "checked with the knob rc=$?"; tail -1 /tmp/t/check.log
mkdir -p /tmp/m
for i in 0 1 2; do
  GTEST_TOTAL_SHARDS=3 GTEST_SHARD_INDEX=$i timeout 200 build/tests/rb_gpu_tests --gtest_filter='Chunked.*:Epilogue.*' > /tmp/m/tests.$i.log 2>&1 &
done
wait
grep -h "^\[ *OK \]\|FAILED\|PASSED" /tmp/m/tests.*.log
echo "all done $(el)"
