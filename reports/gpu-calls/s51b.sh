#!/usr/bin/env bash
# Ran in session 51 after s51a.sh (03:11-03:16 UTC, 241 s), as one command naming nvidia-h200
# and carrying .gpu/bundle.tar.xz (its H200 branch, s46b.sh as it then stood, unpacked that
# bundle; not taken): the call kept the warm H100 (a held machine of that size
# serves it), so it ran s48c.sh: memcheck over the three sansweeps, 0 errors (1608 pass, 192
# skip; 128 pass at M=100003; 40 pass, 8 skip over clusters; 12 ERROR SUMMARY lines of 0
# errors); the wide step beside it ran out of s48c's 230 s bound inside its one test
# (WideTensors.EveryBuiltInKernelIndexesPast32Bits: rc=124, no verdict; at ca1f3af it ended
# inside the same bound, 54 of 60 pass).
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then bash reports/gpu-calls/planned/s46b.sh fwd:140 add:110 bwd:150 add-bwd:150; else bash reports/gpu-calls/s48c.sh; fi
