#!/usr/bin/env bash
# Planned in session 41 (2026-12-06) as s42b.sh, rewritten in session 42: perf-notes run 56's
# timing (shifted 16-bit rows through the ring) on an H200, where the prediction was made
# (s42b.sh timed it on an H100: bwd bf16 H=4097 80.4 -> 84.3% of copy). H200 only; right after
# the GPU tests of the head on the same warm machine, which keeps build/. It carries
# .gpu/base.tar.xz: 0ebbbad's tool (the kernels before run 56) as build-base/. Two rounds ABBA,
# auto, M=16384, aligned H=4096 as the control: expect bwd bf16 H=4097 above 66.5 (README's
# H200 table), add-bwd bf16 H=4097 above 60.8, fp32 level (main leaves its shifted rows
# without the ring). 32 cases a run, 4 runs: about 200 s; then the baseline's run-56 rows
# (16, about 30 s); give the call 600 s.
. reports/gpu-calls/planned/prelude.sh
build/rmsnorm-bench --version >/dev/null || { echo "main's build is not on the machine: run this right after s40a.sh"; exit 8; }
unpack build-base .gpu/base.tar.xz
build-base/rmsnorm-bench --version
machine
scripts/ab-time.sh $R/ab -b base=build-base/rmsnorm-bench -b ring=build/rmsnorm-bench -T 200 \
  -c '--op bwd,add-bwd --kernel auto --dtype bf16,fp32 --M 16384 --H 2049,4096,4097,8191 --layout contiguous,misaligned' \
  >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -80 $R/ab/summary.txt
# The baseline's rows run 56 changes (the default sweep's shifted rows through the ring: bwd
# and add-bwd of row-vector and auto, 16-bit, M=16384 H=4097, both eps), checked and timed
# the default way, put in place of theirs (h200-run56.csv: s38c.sh writes its own h200.csv from
# the committed baseline; merge the two row sets on the CPU machine); compare before/after.
timeout 120 build/rmsnorm-bench --op bwd,add-bwd --kernel row-vector,auto --dtype fp16,bf16 --M 16384 --H 4097 \
  --quiet --out $R/b56 >$R/b56.log 2>&1
echo "run 56 rows rc=$? $(el)"; tail -3 $R/b56.log
build/rmsnorm-bench merge --update reports/baselines/h200.csv $R/b56/results.csv -o $R/h200-run56.csv
echo "merge rc=$?"
build/rmsnorm-bench compare reports/baselines/h200.csv $R/h200-run56.csv --md $R/compare-run56.md >$R/compare-run56.log 2>&1
echo "compare rc=$?"; tail -5 $R/compare-run56.log
tar cJf "$OUT/r.tar.xz" -C /tmp r
