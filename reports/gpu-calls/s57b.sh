#!/usr/bin/env bash
# Session 57 (2026-12-07, 19:27-19:33 UTC, H100, warm after s57a.sh): the 25 GPU tests s57a.sh's
# 400 s step left unfinished (its gpu-unfinished.txt, committed beside this as
# s57b-unfinished.txt), in 16 shards bounded at 420 s, from the tool and tests s57a.sh left in
# build/ (the bundle .gpu/check-75bb03f.tar.xz). Run as one command line:
. reports/gpu-calls/planned/prelude.sh; machine; rerun_unfinished reports/gpu-calls/s57b-unfinished.txt 420 2>&1 | tail -60; tar cJf "$OUT/r.tar.xz" -C /tmp r
