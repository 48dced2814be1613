#!/usr/bin/env bash
# Session 42 (2026-12-06), after `s40a.sh all` found row-vector's bwd (and auto's) ending in
# cudaErrorIllegalAddress at 9fed436 (perf-notes run 56: shifted rows through the TMA ring):
# which case faults (the tool records it as an `error` row, the CSV's last, and exits 4), then
# memcheck over that one case (-lineinfo build: the faulting access's kernel and line).
# It carries .gpu/run56.tar.xz: scripts/pack-gpu.sh's bundle of 9fed436 (exp/run56's head).
. reports/gpu-calls/planned/prelude.sh
build/rmsnorm-bench --version 2>/dev/null | grep -q 9fed436 || tar xJf .gpu/run56.tar.xz || exit 9
machine
V='--kernel row-vector --no-time'
timeout 90 build/rmsnorm-bench --preset validation $V --op bwd --out $R/v >$R/v.log 2>&1
echo "validation bwd rc=$? $(el)"; grep -v "cudaFree\|cudaStreamDestroy" $R/v.log | tail -3 | cut -c1-300
echo "rows: $(($(wc -l <$R/v/results.csv) - 1)); last:"; tail -1 $R/v/results.csv | cut -c1-400
# The last row's case as options (columns by the CSV's header).
args=$(python3 - "$R/v/results.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
r = rows[-1]
wd = 'same' if r['wdtype'] == r['dtype'] else r['wdtype']
print(f"--op {r['op']} --dtype {r['dtype']} --wdtype {wd} --M {r['M']} --H {r['H']} --layout {r['layout']} "
      f"--dist {r['dist']} --eps {r['eps']} --convention {r['convention']}")
PY
)
echo "case: $args"
timeout 120 compute-sanitizer --tool memcheck --print-limit 4 build/rmsnorm-bench $V $args --out $R/san >$R/san.log 2>&1
echo "memcheck rc=$? $(el)"; grep -v "cudaFree\|cudaStreamDestroy" $R/san.log | head -40 | cut -c1-300
timeout 60 build/rmsnorm-bench --preset validation $V --op add-bwd --out $R/va >$R/va.log 2>&1
echo "validation add-bwd rc=$? $(el)"; tail -1 $R/va/results.csv | cut -c1-300
tar cJf "$OUT/r.tar.xz" -C /tmp r
echo "all done $(el)"
