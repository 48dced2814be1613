#!/usr/bin/env bash
# The tool against its peers on the headline shapes, in one device call of about 6 minutes:
#
#   scripts/gpu-bench.sh [OUTDIR]        (OUTDIR: $OUT, else /tmp/bench)
#
# with the tool in build/ and the peer wheels in .gpu/wheels/, or, from a machine without a GPU,
# carrying .gpu/bench.tar.xz (`scripts/pack-gpu.sh bench`: the tool and the wheels), which it
# unpacks when either is missing.
#
# 1. rmsnorm-bench (kernels auto and cudnn; fwd, add, bwd; eps 1e-5) on bf16 M=16384 with H in
#    {1024, 2048, 4096, 4097, 8192, 16384, 32768}, bf16 M=1024 H=65536, bf16 M=65536 H=128, fp32
#    M=16384 H=4096 and the decode shape bf16 M=1 H=4096: one tool call per group (each measures
#    its copy ceiling), merged into tool.csv.
# 2. scripts/peers.py on the same shapes (most telling first, so a spent budget cuts the least
#    telling), --tool-csv tool.csv: each peer row takes the copy ceiling of the tool call that ran
#    its shape. Peer wheels come from .gpu/wheels (scripts/fetch-wheels.sh).
# 3. rmsnorm-bench merge of both (all.csv), scripts/side_by_side.py (side-by-side.md and
#    side-by-side.png) and scripts/plot.py (plots/, when matplotlib is there).
#
# OUTDIR receives few files, as a device call brings back at most 8: summary.txt, all.csv,
# side-by-side.md, side-by-side.png and details.tar.xz (every tool CSV and report, the logs, the
# per-(op, dtype, M) plots). SAMPLES (default 20) cold samples per case, the same number for the
# tool (--min-samples N --max-time 0) and the peers (--samples N --max-time 0). TOTAL_S (default
# 345) is the time the whole script aims at: the peers get what the tool calls left of it, less
# a margin for the case in flight, merging and plotting. PEERS (default all five) picks peers;
# PEERS_ARGS adds peers.py options (PEERS_ARGS=--dry-run checks the pipeline without peers);
# PYTHON (default python3) runs the scripts.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
DIR=${1:-${OUT:-/tmp/bench}}
BUILD=${BUILD_DIR:-build}
BIN=$BUILD/rmsnorm-bench
PY=${PYTHON:-python3}
SAMPLES=${SAMPLES:-20}
TOTAL_S=${TOTAL_S:-345}
PEERS=${PEERS:-torch,torch-compile,triton,liger,helion}
export PYTHONUNBUFFERED=1

if [ -f .gpu/bench.tar.xz ] && { [ ! -x "$BIN" ] || [ ! -d .gpu/wheels ]; }; then tar xJf .gpu/bench.tar.xz; fi
if [ ! -x "$BIN" ]; then
  echo "gpu-bench: no $BIN (build it, or carry \`scripts/pack-gpu.sh bench\`'s .gpu/bench.tar.xz)" >&2
  exit 2
fi
WORK=$(mktemp -d /tmp/gpu-bench.XXXXXX)
mkdir -p "$DIR" "$WORK/tool"
START=$(date +%s)
elapsed() { echo $(($(date +%s) - START)); }
log() { echo "[$(date -u +%H:%M:%S) +$(elapsed)s] $*" | tee -a "$WORK/steps.log"; }

log "gpu-bench: $("$BIN" --version 2>&1 | head -n 1); $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader 2>/dev/null | head -n 1)"
log "python: $("$PY" -c 'import sys, torch, triton; print(sys.version.split()[0], "torch", torch.__version__, "triton", triton.__version__)' 2>&1 | tail -n 1)"

# 1. The tool, one call per group of shapes.
TOOL=(--op fwd,add,bwd --kernel auto,cudnn --eps 1e-5 --min-samples "$SAMPLES" --max-time 0 --quiet)
tool_csvs=()
tool_rcs=""
run_tool() {
  local name=$1 limit=$2
  shift 2
  log "tool $name: $*"
  timeout -k 15 "$limit" "$BIN" "${TOOL[@]}" "$@" --out "$WORK/tool/$name" >"$WORK/tool/$name.log" 2>&1
  local rc=$?
  tool_rcs="$tool_rcs $name=$rc"
  [ -s "$WORK/tool/$name/results.csv" ] && tool_csvs+=("$WORK/tool/$name/results.csv")
  log "tool $name: rc=$rc $(grep -E '^[0-9]+ pass' "$WORK/tool/$name.log" | tail -n 1)"
}
run_tool m16k 170 --dtype bf16 --M 16384 --H 1024,2048,4096,4097,8192,16384,32768
run_tool decode 40 --dtype bf16 --M 1 --H 4096
run_tool fp32 40 --dtype fp32 --M 16384 --H 4096
run_tool wide 60 --dtype bf16 --M 1024 --H 65536
run_tool narrow 40 --dtype bf16 --M 65536 --H 128
if [ ${#tool_csvs[@]} -eq 0 ]; then
  log "gpu-bench: no tool call finished a case; nothing to compare"
  tar cJf "$DIR/details.tar.xz" -C "$WORK" . 2>/dev/null
  exit 1
fi
"$BIN" merge "${tool_csvs[@]}" -o "$WORK/tool.csv" >>"$WORK/steps.log" 2>&1 || log "tool CSVs did not merge"

# 2. The peers, on what is left of TOTAL_S.
SHAPES=(bf16:16384:4096 bf16:16384:8192 bf16:16384:4097 bf16:1:4096 bf16:16384:16384 bf16:16384:2048
        bf16:16384:1024 bf16:16384:32768 fp32:16384:4096 bf16:1024:65536 bf16:65536:128)
left=$((TOTAL_S - $(elapsed) - 25))  # 25 s for merging, tables and plots
budget=$((left - 45))                 # the case in flight when the budget runs out, and the exit
[ "$budget" -lt 30 ] && budget=30 && left=75
shape_args=()
for s in "${SHAPES[@]}"; do shape_args+=(--shape "$s"); done
log "peers ($PEERS): budget ${budget}s, hard limit ${left}s"
timeout -k 20 "$left" "$PY" scripts/peers.py "${shape_args[@]}" --op fwd,add,bwd --eps 1e-5 --peers "$PEERS" \
  --samples "$SAMPLES" --max-time 0 --budget-s "$budget" --tool-csv "$WORK/tool.csv" --csv "$WORK/peers.csv" \
  ${PEERS_ARGS:-} >"$WORK/peers.log" 2>&1
peers_rc=$?
log "peers: rc=$peers_rc $(tail -n 1 "$WORK/peers.log")"
# Killed outright, peers.py leaves its rows in peers.csv.partial.<pid>: keep the complete lines.
partial=$(ls "$WORK"/peers.csv.partial.* 2>/dev/null | head -n 1)
if [ ! -s "$WORK/peers.csv" ] && [ -n "$partial" ]; then
  "$PY" -c 'import sys; t = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(t[:t.rfind("\n") + 1])' \
    "$partial" "$WORK/peers.csv" && log "peers: kept the rows of $(basename "$partial")"
fi

# 3. One CSV, the table, the plots.
if [ -s "$WORK/peers.csv" ]; then
  "$BIN" merge "$WORK/tool.csv" "$WORK/peers.csv" -o "$DIR/all.csv" >>"$WORK/steps.log" 2>&1 ||
    { log "merge of tool and peers failed: $(tail -n 1 "$WORK/steps.log")"; cp "$WORK/tool.csv" "$DIR/all.csv"; }
else
  cp "$WORK/tool.csv" "$DIR/all.csv"
fi
"$PY" scripts/side_by_side.py "$DIR/all.csv" -o "$DIR/side-by-side.md" --plot "$DIR/side-by-side.png" \
  >>"$WORK/steps.log" 2>&1 || log "side_by_side.py failed"
"$PY" scripts/plot.py "$DIR/all.csv" -o "$WORK/plots" >>"$WORK/steps.log" 2>&1 || log "plot.py failed"
log "done"

{
  echo "gpu-bench $(date -u +%Y-%m-%dT%H:%M:%SZ), $(elapsed) s"
  echo "tool calls (rc):$tool_rcs; peers rc=$peers_rc (0 ok, 1 a row failed validation, 3 no torch/GPU, 4 CUDA context lost, 124/143 cut by the time limit)"
  grep -E '^peers: [0-9]+ pass' "$WORK/peers.log" | tail -n 1
  echo "samples per case: $SAMPLES; peers budget ${budget}s"
  # Where auto stands against the others, per GPU (side_by_side.py's line under each table).
  grep -h 'against the other kernels:' "$DIR/side-by-side.md" 2>/dev/null | sed -e 's/\*\*//g' -e 's/`//g' -e 's/:$//'
  echo
  cat "$WORK/steps.log"
} >"$DIR/summary.txt"
tar cJf "$DIR/details.tar.xz" -C "$WORK" . 2>/dev/null
cat "$DIR/summary.txt"
echo
cat "$DIR/side-by-side.md" 2>/dev/null
rm -rf "$WORK"
