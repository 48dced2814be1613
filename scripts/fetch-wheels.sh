#!/usr/bin/env bash
# Downloads the peer packages that scripts/peers.py imports and the GPU machine lacks, as pinned
# wheels from PyPI (`pip download --no-deps`), into .gpu/wheels/. `scripts/pack-gpu.sh bench`
# packs them with the tool into .gpu/bench.tar.xz; on the GPU machine (torch 2.11, Triton 3.6, no
# package registry) peers.py unpacks them into a temporary directory on sys.path: no pip there.
#
#   scripts/fetch-wheels.sh            # LIGER_VERSION, HELION_VERSION override the pins
#
# Dependencies: liger-kernel needs torch and triton only. helion declares numpy, psutil, rich,
# scikit-learn, typing-extensions and filecheck: the first five are in the GPU image (and
# scikit-learn is imported only by surrogate autotuners peers.py does not use); filecheck is
# used by helion's tests, never imported by the package. So no other wheel is needed.
set -euo pipefail
cd "$(dirname "$0")/.."
LIGER_VERSION=${LIGER_VERSION:-0.8.5}
HELION_VERSION=${HELION_VERSION:-1.5.1}
DEST=.gpu/wheels
mkdir -p "$DEST"
# One version of each: peers.py unpacks every wheel it finds.
rm -f "$DEST"/liger_kernel-*.whl "$DEST"/helion-*.whl
python3 -m pip download --quiet --no-deps --only-binary=:all: --dest "$DEST" \
  "liger-kernel==$LIGER_VERSION" "helion==$HELION_VERSION"
for whl in "$DEST"/*.whl; do
  echo "$(du -k "$whl" | cut -f1) KiB  $whl"
  python3 - "$whl" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    meta = next(n for n in z.namelist() if n.endswith(".dist-info/METADATA"))
    deps = [l.split(":", 1)[1].strip() for l in z.read(meta).decode().splitlines()
            if l.startswith("Requires-Dist:") and "extra ==" not in l]
print("    requires: " + (", ".join(deps) or "nothing"))
PY
done
