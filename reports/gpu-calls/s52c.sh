#!/usr/bin/env bash
# Ran in session 52 right after s52b.sh (same warm H100, 06:39-06:43 UTC, 246 s; the device time
# left, 289 s, bounded it), as one command: gpu-check.sh's wide step alone on main's head
# (d2e6e11): rc=124, cut at 245 s inside WideTensors.EveryBuiltInKernelIndexesPast32Bits, no
# verdict. At 0ebbbad the step took 214 s (s41a.sh), at ca1f3af it ended inside 230 s
# beside memcheck's sansweeps (s48c.sh); at 20e3c16 it did not (s51b.sh). Whether the harness
# since ca1f3af slowed it is planned/s53a.sh's to time.
. reports/gpu-calls/planned/prelude.sh; machine; STEPS=wide WIDE_TIMEOUT=245 STEP_TIMEOUT=245 timeout 250 scripts/gpu-check.sh $R/wd >$R/wd.log 2>&1; echo "wide rc=$? $(el)"; grep -h "wide" $R/wd/summary.txt; tail -5 $R/wd/*.log | cut -c1-200; tar cJf "$OUT/r.tar.xz" -C /tmp r
