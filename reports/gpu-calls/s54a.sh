#!/usr/bin/env bash
# Planned in session 53 (2026-12-07), any card (an H100 times the variants against each other
# as well as an H200; the issue's figures are an H200's): perf-notes run 65, the add's held
# rows in torch.compile's shape. Carries .gpu/s54a.tar.xz: branch exp/s53-add-shape's tool
# and GPU tests as build-exp/ (its code is main's 1934283 with two knobs in
# kernels/add_chunked.cu; both unset, it runs main's kernels, which is the control):
#   RB_X_ADDV=1|2  the held (kDecode) add at many rows with 1 or 2 vectors a thread (main: 4),
#                  in blocks of H/(8 x that) threads, bounded to 3 x 512 (1) or 2 x 512 (2)
#                  threads an SM; ptxas: 39-40 and 48-52 registers for 16-bit, no spills
#                  (fp32 at 1 vector: 18-124 bytes of spills; main's 4: 86 at 128 threads);
#   RB_X_ADDS=1    s stored in pass 2 beside y instead of in pass 1 (the same values).
# (.gpu/ is not committed: to remake the pack, build the branch in a clone, strip its tool into
# build-exp/rmsnorm-bench and `tar cf - build-exp | xz -T2 --lzma2=preset=6,dict=256MiB`;
# session 53's was 38.7 MB, stamped 014214ee4d03.)
# They act where main holds the row (add_chunked_holds: M >= 4096, x, r and w of one dtype,
# whole vectors, 16-bit H 2048-8192, fp32 1024-8192) under the fp32 convention with y in x's
# dtype; elsewhere main's launch runs.
# 1. checks, each knob setting: the tool's validation (fp64 reference) over the held rows and
#    their neighbours, the GPU test of the held rows, memcheck over one sweep;
# 2. timing: scripts/ab-time.sh, the five settings as builds, ABBA, two rounds.
# About 300 s (checks about 20 s a setting, memcheck 60, timing 10 runs of 18 cases); bounded
# inside 540 s, tar last.
. reports/gpu-calls/planned/prelude.sh
unpack build-exp .gpu/s54a.tar.xz
build-exp/rmsnorm-bench --version; nvidia-smi --query-gpu=name,driver_version --format=csv,noheader
B=build-exp/rmsnorm-bench
SETS=("RB_X_ADDV=1" "RB_X_ADDV=2" "RB_X_ADDS=1" "RB_X_ADDV=1 RB_X_ADDS=1" "RB_X_ADDV=2 RB_X_ADDS=1")
n=0
for k in "${SETS[@]}"; do
  n=$((n + 1))
  env $k timeout 40 $B --op add --kernel chunked --dtype bf16,fp32 --M 4096 --H 1024,2048,2056,4096,8192 \
    --layout contiguous,misaligned --no-time --quiet --out $R/val$n >$R/val.$n.log 2>&1
  echo "check [$k] rc=$? $(el)"; grep -h "pass, " $R/val.$n.log
done
RB_X_ADDV=1 RB_X_ADDS=1 timeout 60 compute-sanitizer --tool memcheck $B --op add --kernel chunked --dtype bf16,fp32 \
  --M 4096 --H 2056,4096 --layout contiguous,strided --no-time --quiet --out $R/san >$R/san.log 2>&1
echo "memcheck rc=$? $(el)"; grep -h "pass, \|ERROR SUMMARY" $R/san.log
[ $(( $(date +%s) - T0 )) -lt 300 ] || { echo "s54a: no time left for the timing"; tar cJf "$OUT/r.tar.xz" -C /tmp r; exit 0; }
left=$((560 - ($(date +%s) - T0)))
timeout $left scripts/ab-time.sh $R/ab -T 40 -b main=$B -b one="env RB_X_ADDV=1 $B" -b two="env RB_X_ADDV=2 $B" \
  -b late="env RB_X_ADDS=1 $B" -b twolate="env RB_X_ADDV=2 RB_X_ADDS=1 $B" \
  -c '--op add --kernel chunked --dtype bf16,fp16,fp32 --M 4096,16384 --H 2048,4096,8192' >$R/ab.log 2>&1
echo "ab rc=$? $(el)"
head -120 $R/ab/summary.txt
tar cJf "$OUT/r.tar.xz" -C /tmp r
