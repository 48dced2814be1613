#!/usr/bin/env bash
# Session 54 (2026-12-07): one call for whichever card comes. Carries .gpu/s54.tar.xz (58.8 MB,
# packed by hand: build/ = a clean clone's 86eafc2 tool, build-exp/ = s54a.tar.xz's tool, and
# .gpu/wheels/; the two tools share their device code, so xz stores it once). On an H200 it runs
# the baseline's sweeps (s46b.sh, the one-call form); on any other card, perf-notes run 65
# (s54a.sh).
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  PACK=.gpu/s54.tar.xz bash reports/gpu-calls/planned/s46b.sh fwd:140 add:110 bwd:150 add-bwd:150
else
  tar xJf .gpu/s54.tar.xz || exit 9
  bash reports/gpu-calls/s54a.sh
fi
