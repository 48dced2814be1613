#!/usr/bin/env bash
# Ran in session 48 as `bash reports/gpu-calls/planned/s48c.sh` (a fresh start naming
# nvidia-h100-x1: NVIDIA H100 80GB HBM3, driver 580.159.04), 2026-12-06 18:08-18:12 UTC, 237 s:
# memcheck 0 errors over the three sansweeps (1608 + 128 + 40 pass); wide 54 of 60 pass, 3 skip,
# the 32-bit offset mutant caught by 3 of 3. Results in reports/gpu-check.txt (ca1f3af).
# Planned in session 48 (2026-12-06): issue 11's "memcheck is clean" on main's head, any card.
# memcheck last ran over the whole tool sansweep at 98d8691 (s40a.sh); since then row-vector's
# and chunked's backward device code changed (runs 59 and 61, 9fdb13a), each checked by a
# targeted memcheck only; the wide step last ran at 58bce4c (s40b.sh). Carries
# .gpu/bundle.tar.xz (a clean clone's build of ca1f3af, whose device code is the head's).
# Bounded inside 600 s, tar last:
#  - memcheck over the three sansweeps (the built-in strategies at M 1 and 3, every op, three
#    layouts; the backward's persistent grids at M=100003; the clusters at H=65536 M=300), each
#    as 4 processes, 130 s a sweep at most;
#  - beside it, the wide step (bf16 M=524289 H=4096, every op, the 32-bit offset mutant), 230 s.
. reports/gpu-calls/planned/prelude.sh
unpack build .gpu/bundle.tar.xz
machine
(SANITIZER_TOOLS=memcheck SANITIZER_TIMEOUT=130 SANSWEEP_SHARDS=4 STEPS=sansweep \
  timeout 430 scripts/gpu-check.sh $R/sa >$R/sa.log 2>&1) &
STEPS=wide STEP_TIMEOUT=230 timeout 240 scripts/gpu-check.sh $R/wd >$R/wd.log 2>&1
echo "wide rc=$? $(el)"
grep -h "wide" $R/wd/summary.txt
wait
echo "sansweep done $(el)"
grep -h "sanitizers over" $R/sa/summary.txt
grep -h "ERROR SUMMARY" $R/sa/*.log 2>/dev/null | sort | uniq -c
tar cJf "$OUT/r.tar.xz" -C /tmp r
