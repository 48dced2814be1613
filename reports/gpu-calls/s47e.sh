#!/usr/bin/env bash
# Ran in session 46 right after s47d.sh, the same H100, 15:18 UTC, 43 s: 64 pass, 0 errors.
# Planned in session 46 (2026-12-06): right after s47d.sh on its machine (build/ holds
# exp/overhang-col's f73f974 tool): initcheck over s47a.sh's cases (row-vector bwd and add-bwd,
# H 4097 and 8193, M 7 and 4099, bf16 and fp32, contiguous and misaligned), which s47a.sh cut
# at its 90 s after 54 of 64; here 2 processes, each bounded at 150 s.
. reports/gpu-calls/planned/prelude.sh
machine
for k in 0 1; do
  timeout -k 10 160 compute-sanitizer --tool initcheck --print-limit 20 timeout 150 \
    build/rmsnorm-bench --kernel row-vector --op bwd,add-bwd --H 4097,8193 --M 7,4099 --dtype bf16,fp32 \
    --layout contiguous,misaligned --no-time --quiet --kernel-timeout 0 --shard $k/2 --out $R/init-$k >$R/init-$k.log 2>&1 &
done
wait
echo "initcheck done $(el)"
grep -h "pass, .* fail" $R/init-*.log; grep -h "SUMMARY" $R/init-*.log
tar cJf "$OUT/r.tar.xz" -C /tmp r
