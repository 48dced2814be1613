#!/usr/bin/env bash
# Planned in session 52 (2026-12-07), any card: is the wide step slower since ca1f3af? It took
# 214 s at 0ebbbad (s41a.sh) and ended inside 230 s at ca1f3af beside memcheck (s48c.sh); at
# 20e3c16 (s51b.sh) and at d2e6e11 alone (s52c.sh, 245 s) it did not end. Between them the
# harness began keeping plans, refusals and variant lists per problem (perf-notes runs 62-64).
# The tool's --preset wide is the test's sweep (harness/case.cpp wide_sweeps: bf16 and fp32
# M=524289 H=4096, bf16 M=524162 H=4097, every op); the built-in kernels, c43fc7e's tool (before
# run 62) then d2e6e11's, each bounded at WIDE_S (270) s, with wall times and per-case rows; a
# run cut short still leaves the rows it wrote. Carries .gpu/s52.tar.xz (reports/gpu-calls/s52.sh
# says what it holds; unpacked unless the machine holds it). Bounded inside 600 s, tar last.
. reports/gpu-calls/planned/prelude.sh
for b in build/rmsnorm-bench build-before/rmsnorm-bench; do
  [ -x $b ] || { rm -rf build build-prev build-before && tar xJf .gpu/s52.tar.xz || exit 9; break; }
done
machine
for run in before:build-before after:build; do
  tag=${run%%:*}; bin=${run#*:}/rmsnorm-bench
  t=$(date +%s%N)
  timeout "${WIDE_S:-270}" $bin --preset wide --kernel naive,row-vector,warp-row,chunked,staged,auto \
    --no-time --quiet --out $R/$tag >$R/$tag.log 2>&1
  echo "$tag ($bin) rc=$? wall=$(( ($(date +%s%N) - t) / 1000000 )) ms $(el)"; grep -h "pass, " $R/$tag.log
  [ -f $R/$tag/results.csv ] && echo "$tag rows: $(( $(wc -l <$R/$tag/results.csv) - 1 ))"
done
python3 scripts/same-results.py $R/before/results.csv $R/after/results.csv | tail -1
tar cJf "$OUT/r.tar.xz" -C /tmp r
