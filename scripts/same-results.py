#!/usr/bin/env python3
"""Checks that two result CSVs of the same sweep (e.g. before and after a refactor) agree:
the same case keys, and per key the same status, picked strategy, rows checked, error
metrics, mismatch count, worst element and tolerances. Reads schema rmsnorm-bench/1 and /2.
Timing columns are ignored (they differ run to run).

    scripts/same-results.py BEFORE.csv AFTER.csv    (exit 0: same, 1: differ, 2: bad input)
"""
import csv
import sys

KEY = ["kernel", "op", "dtype", "wdtype", "rdtype", "M", "H", "stride", "layout", "eps", "dist", "seed"]
SAME = ["status", "picked", "rows_checked", "max_abs_err", "max_rel_err", "max_ulp", "mismatches",
        "worst_row", "worst_col", "atol", "rtol", "bytes"]


def load(path):
    try:
        with open(path, newline="") as f:
            rows = list(csv.DictReader(f))
    except OSError as e:
        sys.exit(f"{path}: {e}")
    return {tuple(r[k] for k in KEY): r for r in rows}


def main():
    if len(sys.argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    a, b = load(sys.argv[1]), load(sys.argv[2])
    bad = 0
    for k in sorted(set(a) | set(b)):
        if k not in a or k not in b:
            print(f"only in {'after' if k not in a else 'before'}: {'|'.join(k)}")
            bad += 1
            continue
        diff = [c for c in SAME if a[k][c] != b[k][c]]
        if diff:
            bad += 1
            if bad <= 20:
                print(f"{'|'.join(k)}: " + ", ".join(f"{c} {a[k][c]!r} -> {b[k][c]!r}" for c in diff))
    print(f"same-results: {len(a)} before, {len(b)} after, {bad} differing key(s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
