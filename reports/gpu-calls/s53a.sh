#!/usr/bin/env bash
# Ran in session 53 (2026-12-07 09:03-09:12 UTC, 508 s) on one NVIDIA H100 80GB HBM3 (driver
# 580.159.04), warm after s52.sh's check and follow stages on 0b53aca, carrying .gpu/s52.tar.xz
# repacked from a clean clone's build of 0b53aca: before (c43fc7e) rc=0 263.6 s, 54 pass, 0 fail,
# 3 skip; after (0b53aca, whose harness is d2e6e11's) rc=0 244.2 s, 54 pass, 0 fail, 3 skip;
# same-results 57 before, 57 after, 0 differing keys. The wide step has not slowed since the
# plans are kept per problem: it is 244-264 s on this card either way, over s52c.sh's 245 s bound
# (214 s at 0ebbbad was another machine). Results in docs/perf-notes.md ("Runs 63 and 64 again").
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
