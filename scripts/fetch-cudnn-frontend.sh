#!/usr/bin/env bash
# Fetches the cuDNN frontend (NVIDIA's header-only C++ graph API) for the `cudnn` kernel:
# downloads the pinned nvidia-cudnn-frontend wheel from PyPI with pip and unpacks its include/
# into DEST (default: build/_deps/cudnn-frontend, so the headers land in DEST/include).
#
#   scripts/fetch-cudnn-frontend.sh [DEST]
#
# Idempotent: a DEST that already holds this version is left alone. Exits non-zero, saying
# why, when pip or the download is unavailable; the build then goes on without cuDNN (the
# `cudnn` kernel is listed as unavailable). Only the headers are used: libcudnn.so.9 is
# loaded at run time.
set -euo pipefail

# The pin. The frontend is header-only, so every wheel of one version carries the same
# include/; the download asks for one fixed wheel (CPython 3.11, manylinux x86_64) so the
# result does not depend on the local Python or machine.
FRONTEND_VERSION=1.32.0
WHEEL_PYTHON=3.11
WHEEL_PLATFORM=manylinux_2_28_x86_64

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DEST=${1:-$ROOT/build/_deps/cudnn-frontend}
STAMP=$DEST/.nvidia-cudnn-frontend-version

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$FRONTEND_VERSION" ] && [ -f "$DEST/include/cudnn_frontend.h" ]; then
  exit 0
fi

PYTHON=${PYTHON:-python3}
if ! command -v "$PYTHON" >/dev/null 2>&1; then
  echo "fetch-cudnn-frontend: $PYTHON not found: install python3 and pip (apt-get install python3-pip)," \
    "or build without the cudnn kernel" >&2
  exit 1
fi
if ! "$PYTHON" -m pip --version >/dev/null 2>&1; then
  echo "fetch-cudnn-frontend: pip not found for $PYTHON: install it (apt-get install python3-pip)," \
    "or build without the cudnn kernel" >&2
  exit 1
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

if ! "$PYTHON" -m pip download --quiet --disable-pip-version-check --no-deps \
  --only-binary=:all: --python-version "$WHEEL_PYTHON" --platform "$WHEEL_PLATFORM" \
  "nvidia-cudnn-frontend==$FRONTEND_VERSION" -d "$WORK/wheel" >"$WORK/pip.log" 2>&1; then
  echo "fetch-cudnn-frontend: pip download nvidia-cudnn-frontend==$FRONTEND_VERSION failed:" >&2
  tail -n 5 "$WORK/pip.log" >&2
  exit 1
fi

# Unpack include/ next to DEST, then swap it in, so an interrupted run leaves no half tree.
mkdir -p "$(dirname "$DEST")"
STAGE=$(mktemp -d "$(dirname "$DEST")/.cudnn-frontend.XXXXXX")
if ! "$PYTHON" - "$WORK/wheel" "$STAGE" <<'EOF'; then
import glob, os, sys, zipfile

wheels = glob.glob(os.path.join(sys.argv[1], "*.whl"))
if len(wheels) != 1:
    sys.exit("expected one wheel, found %d" % len(wheels))
with zipfile.ZipFile(wheels[0]) as z:
    members = [m for m in z.namelist() if m.startswith("include/")]
    if "include/cudnn_frontend.h" not in members:
        sys.exit("the wheel has no include/cudnn_frontend.h")
    z.extractall(sys.argv[2], members)
EOF
  rm -rf "$STAGE"
  echo "fetch-cudnn-frontend: unpacking the nvidia-cudnn-frontend wheel failed" >&2
  exit 1
fi
echo "$FRONTEND_VERSION" >"$STAGE/.nvidia-cudnn-frontend-version"
rm -rf "$DEST"
mv "$STAGE" "$DEST"
echo "fetch-cudnn-frontend: cuDNN frontend $FRONTEND_VERSION headers in $DEST/include" >&2
