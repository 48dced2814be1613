#!/usr/bin/env python3
"""Sets the tool's kernels and the peers side by side: one markdown table per GPU, a row per
shape and op, a column per kernel, each cell `% of copy` and the median time.

    scripts/side_by_side.py CSV... [-o OUT.md] [--kernels auto,cudnn,peer:torch,...] [--plot OUT.png]

Reads result CSVs (any rmsnorm-bench schema: columns are found by name; e.g. the merged CSV
of the tool and scripts/peers.py). Columns: `auto`, `cudnn`, then the `peer:*` kernels and any
other kernel in the order they first appear (--kernels picks and orders them). Rows: ops in
the order fwd, add, bwd, add-bwd, then dtype, M, H (the label adds wdtype and rdtype where they
are not x's dtype, and eps, layout and dist where those vary).

A cell: `93.1% 45.2 us` for a pass row (`g 1.61 us` added where the row has a CUDA-graph
per-launch time), `FAIL 93.1%` for a timed fail, `fail`/`skip`/`error` for rows without
timing, `-` where the kernel has no row. Several rows of one kernel and shape (other seeds,
cuDNN engines) keep the fastest pass row. The best pass cell of each row is **bold**: the
lowest graph_us where any cell of the row has one (decode shapes: launch overhead is what
counts there), else the lowest median_us. A list of the non-pass rows with their reasons
follows the table, then where the first column's kernel (`auto` by default) stands against the
others, by the same times: the rows where it is the fastest, those where it is within --near
percent (default 2) of the fastest, and each row where it is slower by more, or has no pass row.

--plot draws the same data as one PNG: a panel per op, grouped bars of % of copy per shape,
a bar per kernel (pass rows only; graph time is not drawn). It needs matplotlib; without it
the table is still written and the message says so (exit 0).

Exit codes: 0 done, 2 usage or input error (missing file, not an rmsnorm-bench CSV: the
message names file and line; an unwritable output). The table needs only the standard library.
"""

import argparse
import csv
import os
import sys

NEEDED = ("gpu", "kernel", "op", "dtype", "M", "H", "status", "median_us", "pct_of_copy")
OP_ORDER = {"fwd": 0, "add": 1, "bwd": 2, "add-bwd": 3}


class InputError(Exception):
    pass


def read_rows(path):
    try:
        f = open(path, newline="", encoding="utf-8")
    except OSError as e:
        raise InputError(f"{path}: cannot open: {e.strerror}") from None
    with f:
        reader = csv.reader(f)
        try:
            header = next(reader, None)
            if header is None or any(c not in header for c in NEEDED):
                missing = [c for c in NEEDED if c not in (header or [])]
                raise InputError(f"{path}:1: not an rmsnorm-bench CSV (no column {', '.join(missing)})")
            rows = []
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise InputError(f"{path}:{reader.line_num}: {len(fields)} fields, the header has {len(header)}")
                row = dict(zip(header, fields))
                for col in ("M", "H"):
                    try:
                        row[col] = int(row[col])
                    except ValueError:
                        raise InputError(f"{path}:{reader.line_num}: column {col}: not an integer: "
                                         f"{row[col]!r}") from None
                for col in ("median_us", "pct_of_copy", "graph_us", "copy_gbps"):
                    text = row.get(col, "")
                    try:
                        row[col] = float(text) if text else None
                    except ValueError:
                        raise InputError(f"{path}:{reader.line_num}: column {col}: not a number: {text!r}") from None
                rows.append(row)
            return rows
        except csv.Error as e:
            raise InputError(f"{path}:{reader.line_num}: {e}") from None
        except UnicodeDecodeError as e:
            raise InputError(f"{path}: not UTF-8 text ({e.reason})") from None


# A row of the table: every case-key column but the kernel and seed (ydtype and convention where
# the schema has them).
SHAPE_COLS = ("op", "dtype", "wdtype", "rdtype", "ydtype", "convention", "M", "H", "eps", "layout", "dist")


def field(key, name):
    return key[SHAPE_COLS.index(name)]


def shape_key(row):
    return tuple(row.get(c, "") for c in SHAPE_COLS)


def better(a, b):
    """The row to keep of two of one kernel and shape: a pass row before others, then faster."""
    rank = {"pass": 0, "fail": 1, "error": 2, "skip": 3}
    ka = (rank.get(a["status"], 4), a["median_us"] if a["median_us"] is not None else float("inf"))
    kb = (rank.get(b["status"], 4), b["median_us"] if b["median_us"] is not None else float("inf"))
    return a if ka <= kb else b


def kernel_order(rows, wanted):
    if wanted:
        return wanted
    seen = []
    for r in rows:
        if r["kernel"] not in seen:
            seen.append(r["kernel"])
    first = [k for k in ("auto", "cudnn") if k in seen]
    peers = [k for k in seen if k.startswith("peer:")]
    return first + peers + [k for k in seen if k not in first and k not in peers]


def cell(row):
    if row is None:
        return "-"
    pct, us, graph = row["pct_of_copy"], row["median_us"], row["graph_us"]
    if row["status"] == "pass" and pct is not None:
        text = f"{pct:.1f}% {us:.1f} us"
        if graph is not None:
            text += f" g {graph:.2f} us"
        return text
    if row["status"] == "fail" and pct is not None:
        return f"FAIL {pct:.1f}%"
    return row["status"]


def passing(cells):
    """The timed pass rows among cells {kernel: row}."""
    return {k: r for k, r in cells.items() if r is not None and r["status"] == "pass" and r["median_us"]}


def time_column(passed):
    """The time a row of the table is judged by: graph_us where a pass row has one (decode
    shapes: launch overhead is what counts there), else median_us."""
    return "graph_us" if any(r["graph_us"] is not None for r in passed.values()) else "median_us"


def best_kernel(cells):
    """The kernel of the best pass row among cells {kernel: row}, or None."""
    passed = passing(cells)
    col = time_column(passed)
    pool = {k: r for k, r in passed.items() if r[col] is not None}
    return min(pool, key=lambda k: pool[k][col]) if pool else None


def shape_label(key, varying):
    row = dict(zip(SHAPE_COLS, key))
    text = f"{row['op']} {row['dtype']} M={row['M']} H={row['H']}"
    # The weight and residual dtypes where they are not x's; eps, layout, dist where they vary.
    extra = [f"{c}={row[c]}" for c in ("wdtype", "rdtype", "ydtype") if row[c] and row[c] != row["dtype"]]
    extra += [f"{c}={row[c]}" for c in ("convention", "eps", "layout", "dist") if c in varying and row[c]]
    return text + (" (" + ", ".join(extra) + ")" if extra else "")


def standing(ours, rows_cells, near_pct):
    """Lines saying where kernel `ours` stands in the rows [(label, {kernel: row})], by best_kernel's times."""
    fastest, near, behind, missing = 0, 0, [], []
    for label, cells in rows_cells:
        passed = passing(cells)
        if not [k for k in passed if k != ours]:
            continue  # nothing to stand against
        best = best_kernel(cells)
        col = time_column(passed)
        mine = passed.get(ours)
        if mine is None or mine[col] is None:
            status = "no row" if cells.get(ours) is None else cells[ours]["status"]
            missing.append(f"- {label}: {status if mine is None else 'pass without ' + col}; `{best}` passed")
            continue
        slower = (mine[col] / passed[best][col] - 1.0) * 100.0
        if best == ours:
            fastest += 1
        elif slower <= near_pct:
            near += 1
        else:
            g = "g " if col == "graph_us" else ""
            behind.append(f"- {label}: {slower:.1f}% slower than `{best}` ({g}{mine[col]:.2f} against "
                          f"{passed[best][col]:.2f} us)")
    judged = fastest + near + len(behind)
    out = [f"**`{ours}` against the other kernels:** the fastest in {fastest} of {judged} rows where another "
           f"kernel passed too; within {near_pct:g}% of the fastest in {near} more; slower by more in {len(behind)}"
           + (":" if behind else ".")]
    if behind:
        out += [""] + behind
    if missing:
        out += ["", f"No comparable pass row of `{ours}` where another kernel passed:", ""] + missing
    return out


def md_escape(text):
    return " ".join(text.split()).replace("|", "\\|")


def render(rows, wanted_kernels, near_pct=2.0):
    out = []
    for gpu, (kernels, table) in collect(rows, wanted_kernels).items():
        grows = [r for r in rows if r["gpu"] == gpu]
        varying = {c for i, c in enumerate(SHAPE_COLS) if len({k[i] for k in table if k[i] != ""}) > 1}
        copies = sorted({r["copy_gbps"] for r in grows if r["copy_gbps"] is not None})
        out.append(f"## {gpu or 'unknown GPU'}")
        out.append("")
        if copies:
            out.append("Copy ceiling: " + ", ".join(f"{c:.0f}" for c in copies) + " GB/s. Cells: % of copy and median "
                       "time of cold launches (g: per launch in a CUDA graph); **bold**: the fastest that passed.")
            out.append("")
        out.append("| shape | " + " | ".join(f"`{k}`" for k in kernels) + " |")
        out.append("|---|" + "---|" * len(kernels))

        def order(key):
            row = dict(zip(SHAPE_COLS, key))
            return (OP_ORDER.get(row["op"], 9), row["op"], row["dtype"], row["M"], row["H"], key)

        problems = []
        judged = []
        for key in sorted(table, key=order):
            cells = {k: table[key].get(k) for k in kernels}
            judged.append((shape_label(key, varying), cells))
            best = best_kernel(cells)
            texts = []
            for k in kernels:
                t = cell(cells[k])
                texts.append(f"**{t}**" if k == best else t)
                r = cells[k]
                if r is not None and r["status"] != "pass":
                    problems.append(f"- `{k}` {shape_label(key, varying)}: {r['status']}"
                                    + (f": {md_escape(r['reason'])}" if r.get("reason") else ""))
            out.append(f"| {shape_label(key, varying)} | " + " | ".join(texts) + " |")
        if problems:
            out.append("")
            out.append("Not passed:")
            out.append("")
            out.extend(problems)
        if len(kernels) > 1:
            out.append("")
            out.extend(standing(kernels[0], judged, near_pct))
        out.append("")
    return "\n".join(out)


def collect(rows, wanted_kernels):
    """{gpu: (kernels, {shape key: {kernel: row}})}, the rows kept as render() keeps them."""
    out = {}
    by_gpu = {}
    for r in rows:
        by_gpu.setdefault(r["gpu"], []).append(r)
    for gpu, grows in by_gpu.items():
        kernels = kernel_order(grows, wanted_kernels)
        table = {}
        for r in grows:
            if r["kernel"] in kernels:
                cells = table.setdefault(shape_key(r), {})
                prev = cells.get(r["kernel"])
                cells[r["kernel"]] = r if prev is None else better(prev, r)
        out[gpu] = (kernels, table)
    return out


def plot(rows, wanted_kernels, path):
    """One PNG: per GPU and op a panel of grouped bars (% of copy of pass rows)."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        print(f"side_by_side: no plot ({e}); on Debian: apt-get install python3-matplotlib", file=sys.stderr)
        return 0
    panels = []
    for gpu, (kernels, table) in collect(rows, wanted_kernels).items():
        ops = sorted({field(k, "op") for k in table}, key=lambda op: (OP_ORDER.get(op, 9), op))
        for op in ops:
            keys = sorted((k for k in table if field(k, "op") == op),
                          key=lambda k: (field(k, "dtype"), field(k, "M"), field(k, "H"), k))
            panels.append((gpu, op, kernels, keys, table))
    if not panels:
        return 0
    fig, axes = plt.subplots(len(panels), 1, figsize=(14, 3.6 * len(panels)), squeeze=False)
    for ax, (gpu, op, kernels, keys, table) in zip(axes[:, 0], panels):
        width = 0.8 / max(1, len(kernels))
        for j, kernel in enumerate(kernels):
            xs, ys = [], []
            for i, key in enumerate(keys):
                r = table[key].get(kernel)
                if r is not None and r["status"] == "pass" and r["pct_of_copy"] is not None:
                    xs.append(i - 0.4 + width * (j + 0.5))
                    ys.append(r["pct_of_copy"])
            ax.bar(xs, ys, width=width, label=kernel)
        ax.set_xticks(range(len(keys)))
        ax.set_xticklabels([f"{field(k, 'dtype')} M={field(k, 'M')}\nH={field(k, 'H')}" for k in keys], fontsize=8)
        ax.axhline(100, color="gray", linestyle="--", linewidth=1)
        ax.set_ylim(0, 120)  # room for the legend above the copy line
        ax.set_ylabel("% of copy")
        ax.set_title(f"{op} - {gpu}")
        ax.grid(True, axis="y", alpha=0.3)
        ax.legend(fontsize="small", ncol=min(len(kernels), 7), loc="upper left")
    fig.tight_layout()
    try:
        fig.savefig(path, dpi=100)
    except OSError as e:
        print(f"side_by_side: cannot write {path}: {e.strerror}", file=sys.stderr)
        return 2
    plt.close(fig)
    print(path)
    return 0


def main(argv):
    p = argparse.ArgumentParser(prog="scripts/side_by_side.py",
                                description="Markdown table of the tool's kernels and the peers side by side "
                                            "(% of copy and time per shape and op).")
    p.add_argument("csv", nargs="+", metavar="CSV", help="result CSVs (the tool's, scripts/peers.py's or merged)")
    p.add_argument("-o", "--out", metavar="FILE", help="write the markdown here (default: stdout)")
    p.add_argument("--kernels", metavar="LIST", help="columns, in order (default: auto, cudnn, peer:*, others)")
    p.add_argument("--near", metavar="PCT", type=float, default=2.0,
                   help="the first column's kernel counts as near the fastest within PCT%% of its time (default 2)")
    p.add_argument("--plot", metavar="PNG", help="also draw %% of copy as grouped bars into this PNG (matplotlib)")
    args = p.parse_args(argv)
    if not args.near >= 0 or args.near == float("inf"):
        print(f"side_by_side: --near: {args.near:g} is not a finite percentage >= 0", file=sys.stderr)
        return 2
    try:
        rows = [r for path in args.csv for r in read_rows(path)]
    except InputError as e:
        print(f"side_by_side: {e}", file=sys.stderr)
        return 2
    wanted = [k.strip() for k in args.kernels.split(",") if k.strip()] if args.kernels else None
    text = "# Kernels and peers side by side\n\n" + (render(rows, wanted, args.near) if rows else "No rows.\n")
    if args.out:
        tmp = f"{args.out}.tmp.{os.getpid()}"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(text)
            os.replace(tmp, args.out)
        except OSError as e:
            print(f"side_by_side: cannot write {args.out}: {e.strerror}", file=sys.stderr)
            return 2
    else:
        sys.stdout.write(text)
    return plot(rows, wanted, args.plot) if args.plot and rows else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
