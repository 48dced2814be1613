#!/usr/bin/env bash
# Ran in session 45 right after s46a.sh in the same call (see s46a.sh's header), NVIDIA H100
# 80GB HBM3: 176 pass; the results are reports/auto/h100-shifted-bwd.csv (perf-notes run 60).
# Planned in session 45 (2026-12-06): perf-notes run 60's measurement (auto's backward pick for
# shifted rows, kernels/bwd_auto.cpp). auto sends 16-bit add-bwd rows that are not 16-byte
# aligned to chunked at H <= 2048 and H > 8192, by run 24's measurements, taken before
# row-vector's shifted ring (run 56) and overhang (run 59). Here both strategies run side by
# side on main's build (no second build: one sweep, checked against the fp64 reference and
# timed the default way), alone on the GPU: bwd and add-bwd, bf16 and fp32, M=16384, H around
# the rule's edges, contiguous and misaligned. About 176 cases; bounded at 240 s. Runs on
# main's build/ when the machine holds it (right after s46a.sh), else unpacks
# .gpu/bundle.tar.xz. H200 for the rule (the issue's card); an H100's ratios say the same or not.
. reports/gpu-calls/planned/prelude.sh
unpack build .gpu/bundle.tar.xz
machine
timeout 240 build/rmsnorm-bench --op add-bwd,bwd --kernel row-vector,chunked --dtype bf16,fp32 --M 16384 \
  --H 1024,1025,2048,2049,4096,4097,8192,8193,12289,16377,16384 --layout contiguous,misaligned --eps 1e-5 \
  --quiet --out $R/pick >$R/pick.log 2>&1
echo "pick rc=$? $(el)"; grep -h "Totals" $R/pick/report.md; tail -2 $R/pick.log
python3 - $R/pick/results.csv <<'PY'
import csv, sys
rows = {}
for r in csv.DictReader(open(sys.argv[1])):
    rows.setdefault((r['op'], r['dtype'], r['layout'], int(r['H'])), {})[r['kernel']] = (r['status'], r['pct_of_copy'][:5])
for k in sorted(rows):
    print(*k, rows[k].get('row-vector'), rows[k].get('chunked'))
PY
tar cJf "$OUT/r.tar.xz" -C /tmp r
