#!/usr/bin/env python3
"""Draws a bisect's ULP-distance histograms (ulp_hist.csv, written by `rmsnorm-bench bisect`)
as one PNG: a panel per output, bars per comparison (A vs B, A vs fp64, B vs fp64), a
logarithmic count axis so that a handful of far-off elements still shows beside millions of
exact ones."""
import argparse
import csv
import sys
from collections import OrderedDict


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("csv", help="ulp_hist.csv from rmsnorm-bench bisect")
    ap.add_argument("-o", "--out", required=True, help="PNG to write")
    args = ap.parse_args()
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("SKIP: matplotlib is not installed", file=sys.stderr)
        return 3
    data = OrderedDict()  # output -> comparison -> [(bucket, count)]
    with open(args.csv, newline="") as f:
        for row in csv.DictReader(f):
            data.setdefault(row["output"], OrderedDict()).setdefault(row["comparison"], []).append(
                (row["bucket"], int(row["count"]))
            )
    if not data:
        print(f"{args.csv}: no rows", file=sys.stderr)
        return 1
    fig, axes = plt.subplots(len(data), 1, figsize=(9, 3.2 * len(data)), squeeze=False)
    for ax, (output, comps) in zip(axes[:, 0], data.items()):
        buckets = [b for b, _ in next(iter(comps.values()))]
        width = 0.8 / len(comps)
        for i, (name, rows) in enumerate(comps.items()):
            xs = [k + (i - (len(comps) - 1) / 2) * width for k in range(len(rows))]
            ax.bar(xs, [max(c, 0) for _, c in rows], width=width, label=name)
        ax.set_xticks(range(len(buckets)))
        ax.set_xticklabels(buckets)
        ax.set_yscale("symlog", linthresh=1)
        ax.set_xlabel("ULP distance")
        ax.set_ylabel("elements")
        ax.set_title(output)
        ax.legend()
    fig.tight_layout()
    fig.savefig(args.out, dpi=110)
    return 0


if __name__ == "__main__":
    sys.exit(main())
