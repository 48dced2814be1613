#!/usr/bin/env bash
# Planned in session 46 (2026-12-06), for the session's last 300 s of device time (an H200
# wanted; say which came): auto's backward on issue 11's headline shapes with main's head
# (.gpu/bundle.tar.xz, bcd92fd's clean-clone build: runs 59-61 since the H200's last figures),
# checked and timed the default way, bounded at 120 s: bf16 M=16384 bwd and add-bwd, H 4096,
# 4097, 8192, 8193, 16384 and misaligned 4096; M=1024 H=65536.
. reports/gpu-calls/planned/prelude.sh
rm -rf build && tar xJf .gpu/bundle.tar.xz || exit 9
machine
{
  timeout 80 build/rmsnorm-bench --kernel auto --op bwd,add-bwd --dtype bf16 --M 16384 --H 4096,4097,8192,8193,16384 \
    --eps 1e-5 --quiet --out $R/h1
  timeout 40 build/rmsnorm-bench --kernel auto --op bwd,add-bwd --dtype bf16 --M 16384 --H 4096 --layout misaligned \
    --eps 1e-5 --quiet --out $R/h2
  timeout 40 build/rmsnorm-bench --kernel auto --op bwd,add-bwd --dtype bf16 --M 1024 --H 65536 --eps 1e-5 --quiet --out $R/h3
} >$R/h.log 2>&1
echo "done $(el)"; grep -h "→\|pass, " $R/h.log
tar cJf "$OUT/r.tar.xz" -C /tmp r
