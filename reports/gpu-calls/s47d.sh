#!/usr/bin/env bash
# Ran in session 46 right after s47c.sh, the same H100, 15:16 UTC, 70 s: 432 pass, 0 hazards.
# Planned in session 46 (2026-12-06): right after s47c.sh on its machine (build/ holds
# exp/overhang-col's f73f974 tool), racecheck of the shared memory the branch's overhang now
# reads by Overhang::col: row-vector's bwd and add-bwd on shifted rows through the ring (M=600,
# past twice the resident blocks of 132 SMs) and without it (M=7), H 7, 129, 1025, 2049, 4097 and 8193, three dtypes,
# contiguous, misaligned and skewed; 4 processes, each bounded at 200 s (s47c.sh ran its 32 cases in 10 s).
. reports/gpu-calls/planned/prelude.sh
machine
for k in 0 1 2 3; do
  timeout -k 10 210 compute-sanitizer --tool racecheck --racecheck-report hazard --print-limit 20 timeout 200 \
    build/rmsnorm-bench --kernel row-vector --op bwd,add-bwd --H 7,129,1025,2049,4097,8193 --M 7,600 --dtype bf16,fp16,fp32 \
    --layout contiguous,misaligned,skewed --no-time --quiet --kernel-timeout 0 --shard $k/4 --out $R/race-$k >$R/race-$k.log 2>&1 &
done
wait
echo "racecheck done $(el)"
grep -h "pass, .* fail" $R/race-*.log; grep -h "SUMMARY" $R/race-*.log
tar cJf "$OUT/r.tar.xz" -C /tmp r
