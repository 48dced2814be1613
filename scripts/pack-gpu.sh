#!/usr/bin/env bash
# Packs a build made on a machine without a GPU into one compressed file a device call carries
# (the binaries share most of their device code, which xz's large window stores once):
#
#   scripts/pack-gpu.sh          .gpu/bundle.tar.xz: what a GPU check needs, the tool, the test
#                                binaries, the example plugins and, when present, an earlier
#                                build's tool in build-before/. On the GPU machine:
#                                  tar xJf .gpu/bundle.tar.xz && scripts/gpu-check.sh OUTDIR
#   scripts/pack-gpu.sh bench    .gpu/bench.tar.xz: what scripts/gpu-bench.sh needs, the tool and
#                                the peer wheels scripts/fetch-wheels.sh put in .gpu/wheels/
#                                (gpu-bench.sh unpacks it itself).
#   scripts/pack-gpu.sh ab       .gpu/ab.tar.xz: the tool and build-before/'s, for a timing of a
#                                change against an earlier build (scripts/ab-time.sh), e.g. a
#                                planned call's patch built over main's build.
#
# Two files, not one: a device call carries 64 MiB at most, the working tree (5.6 MB) included.
# On 2026-12-07 the six binaries (63 MB each stripped, 37 MB each compressed alone) came to
# 56.8 MB together, and 62.6 MB with the wheels (5.6 MB), over the limit with the tree.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD_DIR:-build}
MODE=${1:-check}
case "$MODE" in
  check)
    PACK=.gpu/bundle.tar.xz
    files=("$BUILD/rmsnorm-bench" "$BUILD"/tests/rb_*_tests)
    for f in "$BUILD"/examples/plugin/*.so build-before/rmsnorm-bench; do [ -e "$f" ] && files+=("$f"); done
    ;;
  bench)
    PACK=.gpu/bench.tar.xz
    files=("$BUILD/rmsnorm-bench")
    for f in .gpu/wheels/*.whl; do [ -e "$f" ] && files+=("$f"); done
    [ ${#files[@]} -gt 1 ] || echo "pack-gpu: no wheels in .gpu/wheels (scripts/fetch-wheels.sh): the peers will be skipped" >&2
    ;;
  ab)
    PACK=.gpu/ab.tar.xz
    [ -x build-before/rmsnorm-bench ] || { echo "pack-gpu: ab needs build-before/rmsnorm-bench (the earlier build's tool)" >&2; exit 2; }
    files=("$BUILD/rmsnorm-bench" build-before/rmsnorm-bench)
    ;;
  *)
    echo "pack-gpu: unknown mode '$MODE' (check, bench or ab)" >&2
    exit 2
    ;;
esac
mkdir -p .gpu
# The binaries travel stripped of their host symbols and debug sections; device code and its line
# info stay in the fatbins.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
for f in "${files[@]}"; do
  mkdir -p "$stage/$(dirname "$f")"
  cp "$f" "$stage/$f"
  case "$f" in *.whl) ;; *) strip --strip-unneeded "$stage/$f" ;; esac
done
# A 256 MiB window (-9e's is 64 MiB) lets each binary store the device code it shares with the
# others once (the five binaries and plugins of 2026-12-03: 35 MB, against 65 MB with a 64 MiB
# window); 512 MiB gained 0.3% on 2026-12-07's six.
(cd "$stage" && tar cf - "${files[@]}") | xz -T2 --lzma2=preset=6,dict=256MiB >"$PACK"
# What a call carrying the pack holds against the 64 MiB limit: the working tree as the device
# copies it, tracked files and untracked ones git does not ignore.
tree=$(git ls-files -z --cached --others --exclude-standard | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
size=$(stat -c %s "$PACK")
limit=$((64 * 1024 * 1024))
echo "pack-gpu: $PACK $size bytes; with the working tree ($tree bytes) $((size + tree)) of a call's $limit"
if [ $((size + tree)) -gt $limit ]; then
  echo "pack-gpu: $PACK and the working tree are over a device call's 64 MiB: leave build-before/ out" >&2
  exit 1
fi
