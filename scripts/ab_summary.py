#!/usr/bin/env python3
"""Summarises the runs of scripts/ab-time.sh: RUNS/<tag><round>/<group>/results.csv.

Per case (op, kernel, dtypes, M, H, layout, eps, dist, convention, y dtype), a line per build: its
graph-replay us, cold median us and % of copy, round by round, and the ratio of its median cold
time (over the rounds) to the first build's (below 1: faster). A row that did not pass shows
its status; a case a build lacks shows '-'.

    python3 scripts/ab_summary.py RUNS
"""
import csv
import glob
import os
import re
import statistics
import sys

KEY = ["op", "kernel", "dtype", "wdtype", "rdtype", "M", "H", "layout", "eps", "dist", "convention", "ydtype"]
# Key values left out of a case's line: empty ones and the sweep's defaults.
QUIET = {("layout", "contiguous"), ("dist", "normal"), ("convention", "fp32")}


def cell(x, fmt):
    return fmt.format(float(x)) if x not in (None, "") else "-"


def main(argv):
    if len(argv) != 2:
        print("usage: ab_summary.py RUNS", file=sys.stderr)
        return 2
    files = sorted(glob.glob(os.path.join(argv[1], "*", "*", "results.csv")))
    if not files:
        print(f"ab_summary.py: no {argv[1]}/<tag><round>/<group>/results.csv", file=sys.stderr)
        return 2
    tags, cases = [], {}  # cases: key -> tag -> round -> row
    for f in files:
        run = f.split(os.sep)[-3]
        m = re.fullmatch(r"(.*?)(\d+)", run)
        if not m:
            print(f"ab_summary.py: {f}: the run folder '{run}' is not <tag><round>", file=sys.stderr)
            return 2
        tag, rnd = m.group(1), int(m.group(2))
        if tag not in tags:
            tags.append(tag)
        with open(f, newline="") as fh:
            for line, r in enumerate(csv.DictReader(fh), start=2):
                missing = [k for k in KEY + ["status", "median_us"] if r.get(k) is None]
                if missing:
                    print(f"ab_summary.py: {f}:{line}: no column {missing[0]}", file=sys.stderr)
                    return 2
                cases.setdefault(tuple(r[k] for k in KEY), {}).setdefault(tag, {})[rnd] = r
    rounds = sorted({rnd for v in cases.values() for t in v.values() for rnd in t})
    print(f"builds: {', '.join(tags)}; rounds: {', '.join(map(str, rounds))}; ratio: median cold us "
          f"against {tags[0]}'s (below 1: faster)")
    print("case | build: graph us | cold median us | % of copy (round by round) | ratio")
    for key, per_tag in cases.items():
        print(" ".join(f"{k}={v}" for k, v in zip(KEY, key) if v != "" and (k, v) not in QUIET))
        base = None
        for tag in tags:
            rows = per_tag.get(tag, {})
            rs = [rows.get(rnd) for rnd in rounds]
            graph = "/".join(cell(r and r.get("graph_us"), "{:.2f}") for r in rs)
            cold = "/".join(cell(r and r["median_us"], "{:.2f}") for r in rs)
            pct = "/".join(cell(r and r.get("pct_of_copy"), "{:.1f}") for r in rs)
            bad = "".join(f" [{r['status']}]" for r in rs if r and r["status"] != "pass")
            med = [float(r["median_us"]) for r in rs if r and r["median_us"] not in ("", None)]
            m = statistics.median(med) if med else None
            if base is None and tag == tags[0]:
                base = m
            ratio = f"{m / base:.3f}" if m is not None and base else "-"
            print(f"  {tag}: {graph} | {cold} | {pct} | {ratio}{bad}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
