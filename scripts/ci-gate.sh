#!/usr/bin/env bash
# The regression gate as a pipeline step: runs a sweep, then compares it with the committed
# baseline for this GPU and exits with compare's code.
#
#   scripts/ci-gate.sh [--baseline FILE] [--max-slowdown PCT] [--metric gbps|pct-of-copy]
#                      [--out DIR] [--allow-missing] [--ignore-gpu] [--allow-unchecked]
#                      [-- SWEEP OPTIONS...]
#
#   --baseline FILE     default reports/baselines/<gpu>.csv, <gpu> being the nvidia-smi name of
#                       the device the sweep runs on (the first of CUDA_VISIBLE_DEVICES, or 0;
#                       --device N among the sweep options picks the N-th), lower-cased,
#                       "NVIDIA " dropped, each run of characters other than [a-z0-9] as
#                       one '-': "NVIDIA H200" -> h200, "NVIDIA H100 80GB HBM3" -> h100-80gb-hbm3
#   --max-slowdown PCT  passed to compare (default: compare's own, 5%)
#   --metric NAME       passed to compare: gbps (its default) or pct-of-copy, each row's bandwidth
#                       against the copy ceiling its own run measured (for a baseline from
#                       another card of the same kind, or with --ignore-gpu)
#   --out DIR           default results/ci-gate: DIR/results.csv, DIR/report.md (the sweep),
#                       DIR/compare.md (the verdict)
#   --allow-missing, --ignore-gpu, --allow-unchecked   passed to compare (--allow-missing
#                       when the sweep options run only part of the baseline's cases;
#                       --allow-unchecked for a timing-only gate, --no-check among them)
#   SWEEP OPTIONS       after --, for the sweep (default: none, the default sweep); --out and
#                       --csv are the gate's own
#
# Exit: 0 no regression; 1 a regression (including a case that failed validation: the sweep
# exits 1, compare still runs and reports pass -> fail, and the gate fails even if compare did
# not); 2 usage or input error (a missing baseline included); the sweep's 3 (no usable GPU) and
# 4 (a CUDA error aborted it) pass through without a compare.
# Relative paths are taken from the repository root, as in run.sh. Builds first with
# scripts/build.sh; RB_SKIP_BUILD=1 uses the binary already in ${BUILD_DIR:-build}.
set -euo pipefail
SELF=$(cd "$(dirname "$0")" && pwd)/$(basename "$0")
cd "$(dirname "$0")/.."
BIN=${BUILD_DIR:-build}/rmsnorm-bench

usage() { sed -n '2,/^set -euo/p' "$SELF" | sed -e '$d' -e 's/^# \{0,1\}//'; }
die() { echo "ci-gate: $*" >&2; exit 2; }

baseline="" max_slowdown="" metric="" out=results/ci-gate
compare_flags=()
while [ $# -gt 0 ]; do
  case $1 in
    -h|--help) usage; exit 0 ;;
    --baseline|--max-slowdown|--metric|--out)
      if [ $# -lt 2 ] || [ -z "$2" ]; then die "$1 needs a value (see --help)"; fi
      case $1 in
        --baseline) baseline=$2 ;;
        --max-slowdown) max_slowdown=$2 ;;
        --metric) metric=$2 ;;
        --out) out=$2 ;;
      esac
      shift 2 ;;
    --baseline=*) baseline=${1#*=}; shift ;;
    --max-slowdown=*) max_slowdown=${1#*=}; shift ;;
    --metric=*) metric=${1#*=}; shift ;;
    --out=*) out=${1#*=}; shift ;;
    --allow-missing|--ignore-gpu|--allow-unchecked) compare_flags+=("$1"); shift ;;
    --) shift; break ;;
    *) die "unknown option '$1' (sweep options go after --; see --help)" ;;
  esac
done
sweep_opts=("$@")

[ -n "$out" ] || die "--out needs a value"
if [ -n "$max_slowdown" ] && ! [[ $max_slowdown =~ ^[0-9]+([.][0-9]*)?$|^[.][0-9]+$ ]]; then
  die "--max-slowdown '$max_slowdown' is not a non-negative number (percent)"
fi
# Checked here, before the build and the sweep, against compare's own words for it.
case $metric in
  ''|gbps|pct-of-copy) ;;
  *) die "--metric '$metric' is not one of gbps, pct-of-copy" ;;
esac

# The device the sweep will run on, as nvidia-smi names it: --device N (or the first of
# --devices) among the sweep options, counted within CUDA_VISIBLE_DEVICES when that is set.
device=0
for ((i = 0; i < ${#sweep_opts[@]}; i++)); do
  a=${sweep_opts[i]}
  case $a in
    --out|--out=*|--csv|--csv=*) die "'$a' in the sweep options: the gate writes OUT/results.csv; use the gate's --out DIR" ;;
    --device|--devices) device=${sweep_opts[i + 1]:-0}; device=${device%%,*} ;;
    --device=*|--devices=*) device=${a#*=}; device=${device%%,*} ;;
  esac
done
smi_id=$device
if [ -n "${CUDA_VISIBLE_DEVICES:-}" ] && [[ $device =~ ^[0-9]+$ ]]; then
  IFS=, read -r -a visible <<<"$CUDA_VISIBLE_DEVICES"
  smi_id=${visible[device]:-$device}
fi

if [ -z "$baseline" ]; then
  smi_rc=0
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader -i "$smi_id" 2>/dev/null) || smi_rc=$?
  gpu=${gpu%%$'\n'*}
  if [ "$smi_rc" -ne 0 ] || [ -z "$gpu" ]; then
    echo "ci-gate: cannot name GPU '$smi_id' for the default baseline: nvidia-smi exited $smi_rc" \
      "(run 'nvidia-smi -i $smi_id' to see why), or pass --baseline FILE" >&2
    exit 3
  fi
  name=$(printf '%s' "$gpu" | sed -e 's/^NVIDIA //' | tr '[:upper:]' '[:lower:]' |
    sed -e 's/[^a-z0-9][^a-z0-9]*/-/g' -e 's/^-//' -e 's/-$//')
  baseline=reports/baselines/$name.csv
  echo "ci-gate: GPU '$gpu' -> baseline $baseline" >&2
fi
if [ ! -f "$baseline" ]; then
  {
    echo "ci-gate: baseline $baseline not found (paths are from the repository root)."
    echo "  To create it, run the sweep on this GPU and copy its CSV there, then commit it:"
    echo "    scripts/run.sh ${sweep_opts[*]:+${sweep_opts[*]} }--out results/baseline"
    echo "    cp results/baseline/results.csv $baseline"
    echo "  or pass --baseline FILE."
  } >&2
  exit 2
fi

scripts/build.sh >&2

mkdir -p "$out"
echo "ci-gate: sweep -> $out/results.csv" >&2
sweep_rc=0
"$BIN" "${sweep_opts[@]}" --out "$out" || sweep_rc=$?
case $sweep_rc in
  0) ;;
  1) echo "ci-gate: the sweep had validation failures (exit 1); comparing anyway" >&2 ;;
  2) echo "ci-gate: the sweep refused its options or input (exit 2)" >&2; exit 2 ;;
  3) echo "ci-gate: no usable CUDA device or driver (sweep exit 3)" >&2; exit 3 ;;
  4) echo "ci-gate: a CUDA error aborted the sweep (exit 4); partial rows in $out/results.csv" >&2; exit 4 ;;
  *) echo "ci-gate: the sweep ended with exit $sweep_rc" >&2; exit "$sweep_rc" ;;
esac
[ -f "$out/results.csv" ] || die "the sweep wrote no $out/results.csv"

compare_args=("$baseline" "$out/results.csv" --md "$out/compare.md" "${compare_flags[@]}")
[ -z "$max_slowdown" ] || compare_args+=(--max-slowdown "$max_slowdown")
[ -z "$metric" ] || compare_args+=(--metric "$metric")
compare_rc=0
"$BIN" compare "${compare_args[@]}" || compare_rc=$?
case $compare_rc in
  0|1) echo "ci-gate: compare exit $compare_rc; verdict in $out/compare.md" >&2 ;;
  *) echo "ci-gate: compare could not compare (exit $compare_rc): see its message above" >&2 ;;
esac
if [ "$compare_rc" -eq 0 ] && [ "$sweep_rc" -ne 0 ]; then
  echo "ci-gate: FAIL: no regression against the baseline, but the sweep had validation failures" \
    "(see $out/report.md)" >&2
  exit 1
fi
exit "$compare_rc"
