#!/usr/bin/env python3
"""Writes a copy of a results CSV whose timed rows are FACTOR times faster: median_us, min_us,
max_us and graph_us divided by FACTOR, gbps and pct_of_copy derived from them again (the tool's
reader refuses a gbps or % of copy that does not follow from bytes, median_us and copy_gbps).
scripts/gpu-check.sh's scale-out step gates a fresh sweep against such a baseline, which the
gate must then fail as a regression (exit 1), not refuse as unreadable (exit 2).

    scripts/scale-times.py IN.csv OUT.csv FACTOR
"""
import csv
import sys

from peers import derived_rates, format_double  # the tool's number format and rate columns


def main() -> int:
    if len(sys.argv) != 4:
        print(__doc__.strip().splitlines()[-1].strip(), file=sys.stderr)
        return 2
    src, dst = sys.argv[1], sys.argv[2]
    try:
        factor = float(sys.argv[3])
    except ValueError:
        factor = float("nan")
    if not factor > 0:
        print(f"scale-times: FACTOR must be > 0, got {sys.argv[3]}", file=sys.stderr)
        return 2
    with open(src, newline="") as f:
        reader = csv.DictReader(f)
        fields = reader.fieldnames or []
        rows = list(reader)
    for r in rows:
        if not r.get("median_us"):
            continue
        for c in ("median_us", "min_us", "max_us", "graph_us"):
            if r.get(c):
                r[c] = format_double(float(r[c]) / factor)
        r["gbps"], r["pct_of_copy"] = derived_rates(r["bytes"], r["median_us"], r.get("copy_gbps"))
    with open(dst, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields, lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
