#!/usr/bin/env bash
# Packs the binaries a GPU check needs (the tool, the test binaries, the example plugins and,
# when present, an earlier build's tool in build-before/ and the peer wheels that
# scripts/fetch-wheels.sh put in .gpu/wheels/, about 5.5 MB) into .gpu/bundle.tar.xz, so a build
# made on a machine without a GPU travels to one in a single compressed file (the binaries
# share most of their device code, which xz's large window stores once). On the GPU machine:
#   tar xJf .gpu/bundle.tar.xz && scripts/gpu-check.sh OUTDIR      (or scripts/gpu-bench.sh OUTDIR)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
files=("$BUILD/rmsnorm-bench" "$BUILD"/tests/rb_*_tests)
for f in "$BUILD"/examples/plugin/*.so build-before/rmsnorm-bench .gpu/wheels/*.whl; do [ -e "$f" ] && files+=("$f"); done
mkdir -p .gpu
# The binaries travel stripped of their host symbols and debug sections (a device call carries
# 64 MiB at most; device code and its line info stay in the fatbins).
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for f in "${files[@]}"; do
  mkdir -p "$stage/$(dirname "$f")"
  cp "$f" "$stage/$f"
  case "$f" in *.whl) ;; *) strip --strip-unneeded "$stage/$f" ;; esac
done
# A window larger than all the binaries together (-9e's is 64 MiB): each stores its device code
# once (the five binaries and plugins of 2026-12-03: 35 MB, against 65 MB with -9e's window).
(cd "$stage" && tar cf - "${files[@]}") | xz -T2 --lzma2=preset=6,dict=256MiB >.gpu/bundle.tar.xz
ls -la .gpu/bundle.tar.xz
