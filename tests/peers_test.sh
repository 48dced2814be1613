#!/usr/bin/env bash
# Runs tests/peers_test.py (scripts/peers.py without torch or a GPU: --help, the byte formula and
# tolerances against the committed tool CSVs, its rows read back by `rmsnorm-bench merge`).
# Prints "SKIP: ..." and exits 0 when no python3 is found.
#
#   tests/peers_test.sh [PATH/TO/rmsnorm-bench]
set -euo pipefail
cd "$(dirname "$0")/.."
PY=$(command -v python3 || true)
[ -n "$PY" ] || { [ -x /usr/bin/python3 ] && PY=/usr/bin/python3; }
if [ -z "$PY" ]; then echo "SKIP: no python3"; exit 0; fi
exec "$PY" tests/peers_test.py "${1:-}"
