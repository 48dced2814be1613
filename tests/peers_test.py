#!/usr/bin/env python3
"""Checks scripts/peers.py without torch or a GPU:

- importing it and `--help` need no torch;
- its byte formula (op_bytes) equals the `bytes` column of every row of the committed tool CSVs
  (reports/baselines/*.csv, reports/vendor/*.csv: every op and dtype), and its CSV tolerances
  equal their atol/rtol columns;
- format_double writes every number of those files exactly as the tool did;
- the rows it builds (pass and fail rows with timing, skip and error rows, dry-run rows) are
  accepted by the tool's own CSV reader (`rmsnorm-bench merge`, when its path is given), and a
  row whose pct_of_copy breaks the reader's relation is refused (so the check is real);
- columns are filled by name: a header with columns peers.py does not know gets them empty,
  `convention` gets fp32;
- the copy ceiling is taken per shape from the tool's CSV;
- --M/--H lists are parsed as the tool parses them, a range counted before it is expanded.

    tests/peers_test.py [PATH/TO/rmsnorm-bench]

Prints "PASS: ..." and exits 0, or "FAIL: ..." and exits 1.
"""

import csv
import importlib.util
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TOOL_CSVS = [os.path.join(ROOT, "reports", "baselines", "h200.csv"),
             os.path.join(ROOT, "reports", "vendor", "h200-headline.csv"),
             os.path.join(ROOT, "reports", "vendor", "h200-cudnn-engines.csv")]


def fail(message):
    print(f"FAIL: {message}")
    sys.exit(1)


def load_peers():
    spec = importlib.util.spec_from_file_location("peers", os.path.join(ROOT, "scripts", "peers.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if "torch" in sys.modules:
        fail("importing scripts/peers.py imported torch")
    return module


def check_help():
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--help"],
                       capture_output=True, text=True)
    if r.returncode != 0 or "--tool-csv" not in r.stdout or "--samples" not in r.stdout:
        fail(f"peers.py --help exited {r.returncode}: {r.stdout[-300:]} {r.stderr[-300:]}")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--op", "nope"],
                       capture_output=True, text=True)
    if r.returncode != 2 or "--op" not in r.stderr:
        fail(f"peers.py --op nope: exit {r.returncode} (want 2), stderr {r.stderr!r}")


def check_formulas(peers):
    covered = set()
    numbers = 0
    for path in TOOL_CSVS:
        with open(path, newline="") as f:
            for line, row in enumerate(csv.DictReader(f), 2):
                where = f"{os.path.relpath(path, ROOT)}:{line}"
                op, dtype, M, H = row["op"], row["dtype"], int(row["M"]), int(row["H"])
                got = peers.op_bytes(op, M, H, dtype, row["wdtype"], row["rdtype"] or None)
                if got != int(row["bytes"]):
                    fail(f"{where}: op_bytes({op}, M={M}, H={H}, {dtype}, w={row['wdtype']}, r={row['rdtype']}) "
                         f"= {got}, the tool wrote {row['bytes']}")
                covered.add((op, dtype))
                atol, rtol = peers.csv_tolerance(op, dtype, H, row["rdtype"] or None)
                if (atol, rtol) != (float(row["atol"]), float(row["rtol"])):
                    fail(f"{where}: csv_tolerance = ({atol}, {rtol}), the tool wrote ({row['atol']}, {row['rtol']})")
                for col, text in row.items():
                    if col in ("eps", "max_abs_err", "max_rel_err", "max_ulp", "atol", "rtol", "median_us",
                               "min_us", "max_us", "noise_pct", "graph_us", "gbps", "copy_gbps",
                               "pct_of_copy") and text:
                        numbers += 1
                        if peers.format_double(float(text)) != text:
                            fail(f"{where}: column {col}: format_double gives "
                                 f"{peers.format_double(float(text))!r}, the tool wrote {text!r}")
    want = {(op, d) for op in ("fwd", "bwd", "add", "add-bwd") for d in ("fp32", "fp16", "bf16")}
    if not want <= covered:
        fail(f"the tool CSVs do not cover {sorted(want - covered)}")
    return len(covered), numbers


def fake_checked(M, H, mismatches=0):
    return {"rows_checked": M, "max_abs_err": 0.0078125, "max_rel_err": 0.0039, "max_ulp": 0.5,
            "mismatches": mismatches, "worst_row": M - 1, "worst_col": H - 1}


def build_rows(peers, ctx):
    """A row of every kind for a few cases, through build_row as the measured run builds them."""
    rows = []
    timing = {"median_us": 66.81599915027618, "min_us": 65.2, "max_us": 70.1, "noise_pct": 1.25, "samples": 20}
    for i, (op, M, H) in enumerate([("fwd", 16384, 4096), ("add", 16384, 4097), ("bwd", 1, 4096),
                                    ("fwd", 65536, 128)]):
        case = peers.Case(op, "bf16", M, H, 1e-5)
        copy = ctx.copy_for("bf16", M, H)
        rows.append(peers.build_row(ctx, case, "torch", "2.11.0", "pass", "", "F.rms_norm", 24301,
                                    fake_checked(M, H), timing, 1.61 if M <= 256 else None, copy))
        rows.append(peers.build_row(ctx, case, "liger", "0.8.5", "fail", "y: 3 mismatch(es) in 16384 checked rows:",
                                    "LigerRMSNorm, casting_mode=gemma", 24301, fake_checked(M, H, 3), timing, None,
                                    copy))
        rows.append(peers.build_row(ctx, case, "helion", "", "skip", "Helion's rms_norm example has no residual add"))
        rows.append(peers.build_row(ctx, case, "triton", "3.6.0", "error",
                                    f"prepare/launch failed: CompilationError: at {i}:1"))
    return rows


def write_csv(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f, lineterminator="\n")
        w.writerow(header)
        w.writerows(rows)


def run_merge(bench, inputs, out):
    return subprocess.run([bench, "merge", *inputs, "-o", out], capture_output=True, text=True)


def check_rows(peers, bench, tmp):
    merged = 0
    for tool_csv in TOOL_CSVS[:2]:  # schema 1 and schema 2
        ctx = peers.ToolContext.read(tool_csv)
        rows = build_rows(peers, ctx)
        col = {n: i for i, n in enumerate(ctx.header)}
        for row in rows:
            if row[col["median_us"]]:
                gbps = float(row[col["gbps"]])
                want = float(row[col["bytes"]]) / (float(row[col["median_us"]]) * 1e3)
                if abs(gbps - want) > 1e-9 * want:
                    fail(f"gbps {gbps} != bytes / median_us / 1e3 = {want}")
                pct = float(row[col["pct_of_copy"]])
                want = 100.0 * gbps / float(row[col["copy_gbps"]])
                if abs(pct - want) > 1e-9 * want:
                    fail(f"pct_of_copy {pct} != 100 * gbps / copy_gbps = {want}")
            if row[col["kernel"]] != "peer:torch" and row[col["kernel"]] not in (
                    "peer:liger", "peer:helion", "peer:triton"):
                fail(f"unexpected kernel {row[col['kernel']]}")
            if "provider" in col and row[col["provider"]] != "peer":
                fail("provider is not 'peer'")
        out = os.path.join(tmp, "peers.csv")
        write_csv(out, ctx.header, rows)
        # The dry run writes through RowWriter: its CSV must be accepted too.
        dry = os.path.join(tmp, "dry.csv")
        r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--dry-run", "--tool-csv",
                            tool_csv, "--csv", dry, "--shape", "bf16:1:4096", "--H", "4096,4097,65536"],
                           capture_output=True, text=True)
        if r.returncode != 0 or not os.path.exists(dry):
            fail(f"--dry-run exited {r.returncode}: {r.stderr[-400:]}")
        with open(dry, newline="") as f:
            dry_rows = list(csv.reader(f))
        if dry_rows[0] != ctx.header or len(dry_rows) != 1 + 4 * 5 * 3:
            fail(f"--dry-run wrote {len(dry_rows) - 1} rows (want 60) or another header")
        if bench:
            for peer_csv in (out, dry):  # the two share case keys: merged one at a time
                r = run_merge(bench, [tool_csv, peer_csv], os.path.join(tmp, "all.csv"))
                if r.returncode != 0:
                    fail(f"rmsnorm-bench merge refused the peers' rows ({os.path.basename(tool_csv)}, "
                         f"{os.path.basename(peer_csv)}): {r.stdout}{r.stderr}")
            merged += 1
            # A row that breaks the reader's relation must be refused: the check above is real.
            bad = [list(row) for row in rows]
            bad[0][col["pct_of_copy"]] = peers.format_double(float(bad[0][col["pct_of_copy"]]) * 1.01)
            write_csv(os.path.join(tmp, "bad.csv"), ctx.header, bad)
            r = run_merge(bench, [os.path.join(tmp, "bad.csv")], os.path.join(tmp, "bad-out.csv"))
            if r.returncode != 2 or "pct_of_copy" not in r.stderr:
                fail(f"merge accepted a broken pct_of_copy (exit {r.returncode}): {r.stderr}")
    return merged


def check_by_name(peers, tmp):
    header = ["schema", "gpu", "cc", "kernel", "picked", "provider", "provider_version", "convention", "ydtype",
              "y_scale", "future_column", "op", "dtype", "wdtype", "rdtype", "M", "H", "stride", "layout", "eps",
              "dist", "seed", "status", "reason", "rows_checked", "max_abs_err", "max_rel_err", "max_ulp",
              "mismatches", "worst_row", "worst_col", "atol", "rtol", "median_us", "min_us", "max_us", "noise_pct",
              "samples", "graph_us", "bytes", "gbps", "copy_gbps", "pct_of_copy"]
    tool = os.path.join(tmp, "future.csv")
    # Two shapes measured with different copy ceilings (two tool invocations merged).
    base = {"schema": "rmsnorm-bench/3", "gpu": "NVIDIA H200", "cc": "9.0", "kernel": "auto", "op": "fwd",
            "dtype": "bf16", "M": "16384", "status": "pass", "bytes": "1", "median_us": "1", "gbps": "0.001",
            "pct_of_copy": "1"}
    rows = [[{**base, "H": "4096", "copy_gbps": "4280.5"}.get(c, "") for c in header],
            [{**base, "H": "8192", "copy_gbps": "4275"}.get(c, "") for c in header]]
    write_csv(tool, header, rows)
    ctx = peers.ToolContext.read(tool)
    if ctx.copy_for("bf16", 16384, 4096) != "4280.5" or ctx.copy_for("bf16", 16384, 8192) != "4275":
        fail("copy_gbps is not taken per shape from the tool's CSV")
    if ctx.copy_for("bf16", 1, 4096) not in ("4280.5", "4275"):
        fail("a shape the tool did not run gets no copy ceiling")
    if ctx.schema != "rmsnorm-bench/3" or ctx.gpu != "NVIDIA H200":
        fail("schema or gpu not taken from the tool's rows")
    row = peers.build_row(ctx, peers.Case("fwd", "bf16", 16384, 4096, 1e-5), "triton", "3.6.0", "pass",
                          checked=fake_checked(16384, 4096),
                          timing={"median_us": 60.0, "min_us": 59.0, "max_us": 61.0, "noise_pct": 0.4, "samples": 10},
                          copy_gbps=ctx.copy_for("bf16", 16384, 4096))
    v = dict(zip(header, row))
    want = {"convention": "fp32", "ydtype": "", "y_scale": "", "future_column": "", "kernel": "peer:triton",
            "provider": "peer", "provider_version": "3.6.0", "schema": "rmsnorm-bench/3", "copy_gbps": "4280.5",
            "bytes": str(2 * 16384 * 4096 * 2 + 4096 * 2 + 4 * 16384), "stride": "4096", "dist": "normal",
            "layout": "contiguous", "eps": "1e-05", "wdtype": "bf16", "rdtype": ""}
    for k, value in want.items():
        if v[k] != value:
            fail(f"column {k}: {v[k]!r}, want {value!r}")


def check_lists(peers):
    """--M/--H lists as the tool takes them: ranges counted before they are expanded."""
    for text, want in [("4096", [4096]), ("4096,1024,4096", [4096, 1024]),
                       ("1024:16384:x2", [1024, 2048, 4096, 8192, 16384]), ("128:512:+128", [128, 256, 384, 512]),
                       ("1:100000:+1", list(range(1, 100001)))]:
        got = peers.parse_int_list(text, "--H")
        if got != want:
            fail(f"parse_int_list({text!r}) = {got[:8]}... ({len(got)} values), want {want[:8]}... ({len(want)})")
    # Refused, each naming the option, and at once: 2^63 values, a range ending before it
    # starts, a geometric range from 0 (which never grows).
    for text, words in [("1:9223372036854775807:+1", ["--H", "9223372036854775807 values", "100000"]),
                        ("1:100001:+1", ["--H", "100001 values"]), ("10:1:+1", ["--H", "ends before it starts"]),
                        ("0:10:x2", ["--H", "0:10:x2"])]:
        try:
            got = peers.parse_int_list(text, "--H")
        except peers.UsageError as e:
            if not all(w in str(e) for w in words):
                fail(f"parse_int_list({text!r}) refused with {str(e)!r}, which lacks one of {words}")
            continue
        fail(f"parse_int_list({text!r}) gave {len(got)} values, want a refusal")
    r = subprocess.run([sys.executable, os.path.join(ROOT, "scripts", "peers.py"), "--H", "1:9223372036854775807:+1"],
                       capture_output=True, text=True, timeout=60)
    if r.returncode != 2 or "--H" not in r.stderr or "100000" not in r.stderr:
        fail(f"peers.py --H 1:9223372036854775807:+1: exit {r.returncode} (want 2), stderr {r.stderr!r}")


def check_config_text(peers):
    """A Helion config as Helion 1.5.1 holds it (the dict behind helion.Config) fits `picked`:
    the keys a reader needs (block sizes, warps, stages, eviction policies) survive the column's
    limit, empty values are left out, a repeated list is written once with its count."""
    config = {"atomic_indexing": [], "block_sizes": [4], "host_tensor_descriptors": False,
              "indexing": ["pointer"] * 8, "load_eviction_policies": ["", "first", ""], "num_stages": 1,
              "num_warps": 4, "pid_type": "flat", "range_flattens": [None], "range_multi_buffers": [None],
              "range_num_stages": [0], "range_unroll_factors": [0], "range_warp_specializes": [],
              "reduction_loops": [None], "maxnreg": None}
    want = ("block_sizes=[4] host_tensor_descriptors=False indexing=['pointer']*8 "
            "load_eviction_policies=['', 'first', ''] num_stages=1 num_warps=4 pid_type='flat' "
            "range_flattens=[None] range_multi_buffers=[None] range_num_stages=[0] "
            "range_unroll_factors=[0] reduction_loops=[None]")
    got = peers.config_text(config)
    if got != want:
        fail(f"config_text gave {got!r}, want {want!r}")
    case = peers.Case("fwd", "bf16", 16384, 1024, 1e-5)
    row = peers.build_row(peers.ToolContext.read(TOOL_CSVS[0]), case, "helion", "1.5.1", "skip", "x",
                          "helion " + got)
    header = peers.ToolContext.read(TOOL_CSVS[0]).header
    picked = row[header.index("picked")]
    if "num_warps=4" not in picked or picked.endswith("..."):
        fail(f"the picked column lost the config: {picked!r}")


def main():
    bench = sys.argv[1] if len(sys.argv) > 1 and sys.argv[1] else None
    if bench and not os.access(bench, os.X_OK):
        print(f"note: {bench} is not an executable; the merge checks are left out")
        bench = None
    peers = load_peers()
    check_help()
    check_lists(peers)
    check_config_text(peers)
    combos, numbers = check_formulas(peers)
    with tempfile.TemporaryDirectory() as tmp:
        merged = check_rows(peers, bench, tmp)
        check_by_name(peers, tmp)
    print(f"PASS: op_bytes and tolerances match the tool on {combos} (op, dtype) combos, format_double on "
          f"{numbers} numbers; peer rows accepted by merge for {merged} schema(s)"
          + ("" if bench else " (merge checks left out: no rmsnorm-bench given)"))


if __name__ == "__main__":
    main()
