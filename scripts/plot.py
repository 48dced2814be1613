#!/usr/bin/python3
"""Plots rmsnorm-bench results: bandwidth and % of the copy ceiling against H.

    scripts/plot.py CSV... -o DIR

Reads one or more result CSVs (schema rmsnorm-bench/3, or the older /2 and /1) and writes into DIR one
PNG per (op, dtype, wdtype, M), e.g. DIR/fwd_bf16_bf16_M16384.png (ops with a residual stream get
one per residual dtype too: ..._M16384_rbf16.png; a convention other than fp32 and an fp8 y one
each too: ..._M16384_gemma_ye4m3.png), with two panels side by side:
effective GB/s against H (dashed line: the measured copy ceiling) and % of copy against H,
one line per kernel, log2 H axis. Only rows with status pass and a gbps value are plotted;
where several rows share (kernel, H) in a figure (other eps, dist, layout, or several
CSVs) the one with the highest gbps is plotted. Kernel "auto" is one line labelled "auto"
whatever strategy it picked at each H.

Prints one line per file written. Exit codes: 0 done (also when nothing was plottable),
2 usage or input error (missing file, not an rmsnorm-bench CSV: the message names the
file and line).

Needs only the standard library and matplotlib (Debian: python3-matplotlib).
"""

import argparse
import csv
import os
import re
import sys

SCHEMA = "rmsnorm-bench/3"
COLUMNS_V1 = (
    "schema,gpu,cc,kernel,picked,op,dtype,wdtype,rdtype,M,H,stride,layout,eps,dist,seed,"
    "status,reason,rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,worst_row,worst_col,"
    "atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,copy_gbps,pct_of_copy"
).split(",")
# Schema 2 adds provider and provider_version after picked (reports/columns.h).
COLUMNS_V2 = COLUMNS_V1[:5] + ["provider", "provider_version"] + COLUMNS_V1[5:]
# Schema 3 adds convention, ydtype and y_scale after seed.
_SEED = COLUMNS_V2.index("seed") + 1
COLUMNS = COLUMNS_V2[:_SEED] + ["convention", "ydtype", "y_scale"] + COLUMNS_V2[_SEED:]
# The header of each schema the tool has written; the header line says which one a file is.
SCHEMAS = {SCHEMA: COLUMNS, "rmsnorm-bench/2": COLUMNS_V2, "rmsnorm-bench/1": COLUMNS_V1}


class InputError(Exception):
    pass


def parse_number(text, kind, where, column):
    try:
        return kind(text)
    except ValueError:
        raise InputError(f"{where}: column {column}: not a number: {text!r}") from None


def read_rows(path):
    """Yields (gpu, (op, dtype, wdtype, M, rdtype, variant), kernel, H, gbps, copy_gbps, pct_of_copy)
    (variant: the convention unless fp32, and "y" + an fp8 y dtype, joined by "_"; "" for neither)
    for every pass row with a gbps value. Raises InputError naming file:line on bad input."""
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None:
                raise InputError(f"{path}:1: empty file, expected the {SCHEMA} CSV header")
            schema = next((name for name, cols in SCHEMAS.items() if header == cols), None)
            COL = {name: i for i, name in enumerate(header)}
            if schema is None:
                raise InputError(
                    f"{path}:1: not an {SCHEMA} CSV: the header does not match "
                    f"(starts {','.join(header[:4])!r}, expected {','.join(COLUMNS[:4])!r}...)")
            for fields in reader:
                where = f"{path}:{reader.line_num}"
                if not fields:
                    continue  # a blank line
                if len(fields) != len(header):
                    raise InputError(
                        f"{where}: {len(fields)} fields, the {schema} header has {len(header)}")
                if fields[COL["schema"]] != schema:
                    raise InputError(
                        f"{where}: schema {fields[COL['schema']]!r}, expected {schema!r}")
                if fields[COL["status"]] != "pass" or fields[COL["gbps"]] == "":
                    continue

                def num(column, kind=float):
                    return parse_number(fields[COL[column]], kind, where, column)

                def opt(column):
                    return num(column) if fields[COL[column]] != "" else None

                conv = fields[COL["convention"]] if "convention" in COL else "fp32"
                ydtype = fields[COL["ydtype"]] if "ydtype" in COL else ""
                variant = "_".join(v for v in (conv if conv != "fp32" else "", f"y{ydtype}" if ydtype else "") if v)
                key = (fields[COL["op"]], fields[COL["dtype"]], fields[COL["wdtype"]],
                       num("M", int), fields[COL["rdtype"]], variant)
                yield (fields[COL["gpu"]], key, fields[COL["kernel"]], num("H", int), num("gbps"),
                       opt("copy_gbps"), opt("pct_of_copy"))
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}: {e}") from None
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: not UTF-8 text ({e.reason})") from None


def file_stem(key):
    """The file name for a figure, without .png; the same rule as plot_file_name() in
    reports/markdown.cpp, which links these files from the markdown report."""
    op, dtype, wdtype, M, rdtype, variant = key
    stem = f"{op}_{dtype}_{wdtype}_M{M}" + (f"_r{rdtype}" if rdtype else "") + (f"_{variant}" if variant else "")
    return re.sub(r"[^A-Za-z0-9_-]", "-", stem)


def kernel_order(name):
    return (name == "auto", name)  # auto last: drawn on top of the strategies it picks from


def plot_figure(plt, ticker, key, series, gpus, ceiling, path):
    op, dtype, wdtype, M, rdtype, variant = key
    fig, (ax_bw, ax_pct) = plt.subplots(1, 2, figsize=(13, 5))
    for kernel in sorted(series, key=kernel_order):
        points = sorted(series[kernel].items())  # [(H, (gbps, copy_gbps, pct_of_copy))]
        hs = [h for h, _ in points]
        style = dict(marker="o", markersize=4, label=kernel)
        if kernel == "auto":
            style.update(color="black", linewidth=2.2, zorder=3)
        else:
            style.update(linewidth=1.3)
        ax_bw.plot(hs, [gbps for _, (gbps, _, _) in points], **style)
        pct = [(h, p) for h, (_, _, p) in points if p is not None]
        if pct:
            ax_pct.plot([h for h, _ in pct], [v for _, v in pct], **style)
    if ceiling is not None:
        ax_bw.axhline(ceiling, color="gray", linestyle="--", linewidth=1.2,
                      label=f"copy ceiling ({ceiling:.0f} GB/s)")
    ax_pct.axhline(100, color="gray", linestyle="--", linewidth=1.2)
    for ax in (ax_bw, ax_pct):
        ax.set_xscale("log", base=2)
        ax.xaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _: f"{v:.0f}"))
        ax.set_xlabel("H (hidden size)")
        ax.set_ylim(bottom=0)
        ax.grid(True, which="major", alpha=0.3)
    ax_bw.set_ylabel("effective bandwidth (GB/s)")
    ax_bw.set_title("GB/s")
    ax_pct.set_ylabel("% of copy ceiling")
    ax_pct.set_title("% of copy")
    ax_bw.legend(fontsize="small", loc="best")
    rd = (f"  rdtype={rdtype}" if rdtype else "") + (f"  {variant}" if variant else "")
    fig.suptitle(f"op={op}  dtype={dtype}  wdtype={wdtype}{rd}  M={M}  —  {' / '.join(gpus)}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv):
    parser = argparse.ArgumentParser(
        prog="scripts/plot.py",
        description="Plot GB/s and % of copy against H from rmsnorm-bench result CSVs: "
                    "one PNG per (op, dtype, wdtype, M).")
    parser.add_argument("csv", nargs="+", metavar="CSV", help="result CSV (rmsnorm-bench/1)")
    parser.add_argument("-o", "--out", required=True, metavar="DIR",
                        help="directory for the PNG files (created if missing)")
    args = parser.parse_args(argv)

    # figures[(op, dtype, wdtype, M, rdtype, variant)] = {"series": {kernel: {H: (gbps, copy, pct)}}, ...}
    figures = {}
    try:
        for path in args.csv:
            for gpu, key, kernel, H, gbps, copy, pct in read_rows(path):
                fig = figures.setdefault(key, {"series": {}, "gpus": [], "ceiling": None})
                if gpu not in fig["gpus"]:
                    fig["gpus"].append(gpu)
                if copy is not None and (fig["ceiling"] is None or copy > fig["ceiling"]):
                    fig["ceiling"] = copy
                best = fig["series"].setdefault(kernel, {})
                if H not in best or gbps > best[H][0]:
                    best[H] = (gbps, copy, pct)
    except InputError as e:
        print(f"plot: {e}", file=sys.stderr)
        return 2

    if not figures:
        print("plot: no rows with status pass and a gbps value: nothing to plot", file=sys.stderr)
        return 0

    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        import matplotlib.ticker as ticker
    except ImportError as e:
        print(f"plot: cannot import matplotlib ({e}); "
              "on Debian: apt-get install python3-matplotlib", file=sys.stderr)
        return 2

    try:
        os.makedirs(args.out, exist_ok=True)
    except OSError as e:
        print(f"plot: cannot create {args.out}: {e.strerror}", file=sys.stderr)
        return 2

    used = set()
    for key in sorted(figures):
        base = file_stem(key)
        name, n = base, 1
        while name in used:  # two keys that differ only in characters the name replaces
            n += 1
            name = f"{base}-{n}"
        used.add(name)
        path = os.path.join(args.out, name + ".png")
        fig = figures[key]
        try:
            plot_figure(plt, ticker, key, fig["series"], fig["gpus"], fig["ceiling"], path)
        except OSError as e:
            print(f"plot: cannot write {path}: {e.strerror}", file=sys.stderr)
            return 2
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
