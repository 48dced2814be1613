#!/usr/bin/env bash
# Installs the Debian packages the build needs (only those missing) and checks for nvcc.
# Idempotent; safe to run on every build. Needs root (or sudo) only when something is missing.
set -euo pipefail

# Extra package names given as arguments are installed the same way (scripts/fuzz.sh: clang).
PACKAGES=(cmake ninja-build g++ git libcli11-dev libeigen3-dev libfccp-dev libfmt-dev libgtest-dev python3-matplotlib python3-pip
          "$@")

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}" >&2
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

if ! command -v nvcc >/dev/null 2>&1 && [ ! -x /usr/local/cuda/bin/nvcc ]; then
  echo "setup: nvcc not found (PATH or /usr/local/cuda/bin): install the CUDA toolkit 13 first" >&2
  exit 2
fi
