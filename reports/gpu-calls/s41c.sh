#!/usr/bin/env bash
# Ran in session 41 (2026-12-06 01:11 UTC, 64 s, the same H100 warm after s41b.sh) as
# `bash reports/gpu-calls/s41c.sh`, carrying .gpu/bundle.tar.xz (unpacked only when build/ is
# gone): the two GPU tests s41b.sh's step left unfinished, side by side. Both passed:
# mutant-dw-partial-overwrite caught by 32 of 3728 cases (0 of 3696 at M=19, 32 of 32 at many
# rows), 63 s; mutant-saved-rms by 2392 of 2392, 48 s.
build/tests/rb_gpu_tests --gtest_list_tests >/dev/null 2>&1 || tar xJf .gpu/bundle.tar.xz
nvidia-smi --query-gpu=name --format=csv,noheader
T0=$(date +%s)
for m in mutant_dw_partial_overwrite mutant_saved_rms; do
  timeout 470 build/tests/rb_gpu_tests --gtest_filter="AllMutants/MutantCaught.ByValidationSweep/$m" >/tmp/$m.log 2>&1 &
done
wait
echo "+$(($(date +%s) - T0))s"
grep -h "^MUTANT\|^\[  \|OK \]\|FAILED" /tmp/mutant_*.log | cut -c1-220
cp /tmp/mutant_*.log "$OUT"/
