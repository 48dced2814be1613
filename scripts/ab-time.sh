#!/usr/bin/env bash
# Times builds (or one build under different knobs) against each other on the same cases, the
# way docs/perf-notes.md measures a change: every build runs every case group, the builds
# alternate within a round and the rounds repeat, even rounds in the reverse order (a, b, b, a:
# ABBA), so a drift of the GPU (clocks, temperature) and the cost of running second fall on all
# builds alike. Ends with OUTDIR/summary.txt (scripts/ab_summary.py): per case,
# each build's graph-replay µs, cold median µs and % of copy, round by round, and each build's
# median against the first build's.
#
#   scripts/ab-time.sh OUTDIR -b TAG=COMMAND [-b TAG=COMMAND ...] -c 'OPTIONS' [-c 'OPTIONS' ...]
#                      [-r ROUNDS] [-t 'TIMING OPTIONS'] [-T SECONDS]
#
#   -b TAG=COMMAND  a build: TAG names it in the summary (letters, digits, '-', '_'; not ending
#                   in a digit), COMMAND runs it, split into words, e.g.
#                   -b before=build-before/rmsnorm-bench -b new=build/rmsnorm-bench
#                   -b held='env RB_X_HELD=1 build/rmsnorm-bench'
#   -c 'OPTIONS'    a case group: the tool's sweep options, e.g. -c '--op fwd --kernel chunked
#                   --dtype bf16 --M 1,16384 --H 1024,4096'. Each group is one run of each build.
#   -r ROUNDS       rounds (default 2)
#   -t 'OPTIONS'    the timing options of every run (default: --eps 1e-5 --min-samples 10
#                   --max-time 0.05 --no-check). A timing run skips validation; check a change
#                   with the GPU tests or a sweep without --no-check.
#   -T SECONDS      bounds each run (default 600; a run cut short is listed as such)
#
# A run that fails is reported in OUTDIR/runs.txt with its exit status and its log kept; the
# summary shows the rows it wrote. Nothing is built: build first (scripts/build.sh).
# Exit: 0 every run exited 0, 1 a run did not, 2 bad usage, 5 no results to summarise.
set -uo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '9,10p' "$0" | sed 's/^# *//' >&2; exit 2; }
OUT=${1:-}
[ -n "$OUT" ] && [ "${OUT#-}" = "$OUT" ] || { echo "ab-time.sh: OUTDIR first" >&2; usage; }
shift
ROUNDS=2
TIMING="--eps 1e-5 --min-samples 10 --max-time 0.05 --no-check"
RUN_TIMEOUT=600
tags=() cmds=() groups=()
while getopts "b:c:r:t:T:" opt; do
  case $opt in
    b)
      tag=${OPTARG%%=*} cmd=${OPTARG#*=}
      [[ "$OPTARG" == *=* && "$tag" =~ ^[A-Za-z0-9_-]*[A-Za-z_-]$ && -n "$cmd" ]] ||
        { echo "ab-time.sh: -b '$OPTARG': want TAG=COMMAND, TAG of letters, digits, '-' or '_', not ending in a digit" >&2; exit 2; }
      for t in "${tags[@]}"; do [ "$t" != "$tag" ] || { echo "ab-time.sh: -b: tag '$tag' given twice" >&2; exit 2; }; done
      tags+=("$tag") cmds+=("$cmd")
      ;;
    c) groups+=("$OPTARG") ;;
    r) [[ "$OPTARG" =~ ^[1-9][0-9]?$ ]] || { echo "ab-time.sh: -r '$OPTARG': want 1 to 99 rounds" >&2; exit 2; }; ROUNDS=$OPTARG ;;
    t) TIMING=$OPTARG ;;
    T) [[ "$OPTARG" =~ ^[1-9][0-9]*$ ]] || { echo "ab-time.sh: -T '$OPTARG': want whole seconds >= 1" >&2; exit 2; }; RUN_TIMEOUT=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
[ $# -eq 0 ] || { echo "ab-time.sh: unexpected argument '$1'" >&2; usage; }
[ ${#tags[@]} -ge 1 ] || { echo "ab-time.sh: no build: give -b TAG=COMMAND" >&2; exit 2; }
[ ${#groups[@]} -ge 1 ] || { echo "ab-time.sh: no case group: give -c 'OPTIONS'" >&2; exit 2; }
for i in "${!tags[@]}"; do
  read -r -a words <<<"${cmds[$i]}"
  # The command's program: the first word that is not env or a VAR=value.
  prog=""
  for w in "${words[@]}"; do [[ "$w" == env || "$w" == *=* ]] || { prog=$w; break; }; done
  command -v "$prog" >/dev/null 2>&1 || [ -x "$prog" ] ||
    { echo "ab-time.sh: -b ${tags[$i]}: '$prog' is not an executable (build first: scripts/build.sh)" >&2; exit 2; }
done
mkdir -p "$OUT/runs" || exit 2
read -r -a timing <<<"$TIMING"
: >"$OUT/runs.txt"
failed=0
for ((round = 1; round <= ROUNDS; round++)); do
  # Even rounds reverse the builds' order: run 52 (docs/perf-notes.md) timed the second build of
  # every round 0.3-6.6% slower at M=1 in a fixed order, which it could not tell from the code.
  order=("${!tags[@]}")
  ((round % 2 == 0)) && order=($(printf '%s\n' "${order[@]}" | tac))
  for i in "${order[@]}"; do
    read -r -a cmd <<<"${cmds[$i]}"
    for g in "${!groups[@]}"; do
      read -r -a opts <<<"${groups[$g]}"
      dir="$OUT/runs/${tags[$i]}$round/g$g"
      mkdir -p "$dir"
      start=$(date +%s)
      timeout "$RUN_TIMEOUT" "${cmd[@]}" "${timing[@]}" "${opts[@]}" --quiet --out "$dir" >"$dir/log.txt" 2>&1
      rc=$?
      line="${tags[$i]} round $round group $g: rc=$rc $(($(date +%s) - start))s"
      [ "$rc" = 124 ] && line+=" (cut at ${RUN_TIMEOUT}s)"
      [ "$rc" = 0 ] || failed=1
      echo "$line" | tee -a "$OUT/runs.txt"
    done
  done
done
python3 scripts/ab_summary.py "$OUT/runs" >"$OUT/summary.txt" || exit 5
cat "$OUT/summary.txt"
# 1 where a run failed (its rows may be missing from the summary), as a sweep's exit 1.
exit "$failed"
