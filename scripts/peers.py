#!/usr/bin/env python3
"""Runs the tool's shapes through peer RMSNorm implementations and writes rows in the tool's
CSV schema, so `rmsnorm-bench merge`, `compare`, scripts/plot.py and scripts/side_by_side.py
treat them like the tool's own kernels.

    scripts/peers.py --tool-csv TOOL.csv --csv PEERS.csv [--op fwd,add,bwd] [--dtype bf16]
                     [--M 16384] [--H 4096,8192] [--shape bf16:1:4096 ...] [--eps 1e-5]
                     [--peers torch,torch-compile,triton,liger,helion] [--samples N]

Peers (kernel column `peer:<name>`, provider `peer`, provider_version the package's version):
  peer:torch          eager torch.nn.functional.rms_norm; bwd: autograd through it; add: x + r
                      (rounded to x's dtype by torch), then rms_norm of that sum.
  peer:torch-compile  torch.compile (inductor, static shapes, fullgraph) of a plain reference:
                      upcast to fp32, fp32 mean of squares, rsqrt(ms + eps), one rounding at the
                      output; add: s = x + r in fp32, y from the fp32 s, s rounded once; bwd:
                      autograd through the compiled function (inductor's compiled backward).
  peer:triton         scripts/peer_kernels/triton_rmsnorm.py, written for this project
                      (persistent grid over row tiles, fp32 accumulation, masked loads/stores
                      for any H, eps inside the sqrt); fwd, add and bwd (dx per row, dw as fp32
                      partial rows per program summed in program order).
  peer:liger          Liger-Kernel's LigerRMSNorm (fwd, bwd) and LigerFusedAddRMSNorm (add), with
                      casting_mode="gemma" and offset 0: fp32 compute and one rounding at the
                      output, the tool's `fp32` convention (Liger's default "llama" mode rounds
                      x*rrms to x's dtype before the weight). LigerRMSNorm runs with Liger's
                      default in_place=True: its backward writes dx over dy, so the timed
                      backward samples after the checked first launch run on the overwritten
                      buffer (the values change, the work does not). Its fused add rounds s to
                      x's dtype before normalising it.
  peer:helion         scripts/peer_kernels/helion_rmsnorm.py: the algorithm of Helion's
                      examples/rms_norm.py (not in the wheel), fwd and bwd, rrms in fp32. The
                      config is the best of a short list (Helion's default config, num_warps
                      doubled and halved, and for H <= 2048 four times the rows per tile), each
                      compiled and timed briefly: no autotuning search. No add.

Semantics and bytes. The ops are the tool's (README "Ops"): fwd reads x, w and writes y, rrms;
bwd reads x, w, dy and the saved fp32 rrms and writes dx, dw; add reads x, r, w and writes y,
s (the residual stream) and rrms. The `bytes` column is the tool's formula, op_bytes() below,
the same sum as op_bytes() in harness/ops.cpp (each input and output of the op's description
in harness/ops.cpp, elements times element size): fwd 2*M*H*sx + H*sw + 4*M; bwd 3*M*H*sx +
2*H*sw + 4*M; add 2*M*H*(sx + sr) + H*sw + 4*M (add-bwd M*H*(sx + 3*sr) + 2*H*sw + 4*M, for
completeness). A peer that does not write rrms (torch, torch-compile and liger in fwd/add;
their y is checked, their rrms is not), that recomputes or re-reads it differently (the
autograd peers' backward uses the rrms their own forward saved, or recomputes it; triton and
helion read the same fp32 rrms the tool hands its kernels), or that moves more memory (torch's
unfused add writes s and reads it again) is still charged the tool's bytes: gbps compares
implementations of one op on one byte count.

Inputs: generated on the GPU by torch with fixed seeds derived from --seed: x ~ N(0,1),
r ~ N(0,1), w = 1 + 0.5*N(0,1), dy = 3 + N(0,1) (the tool's N(3,1), so a backward missing its
correction term fails), each drawn in fp32 and rounded to its dtype; contiguous rows; w in
x's dtype (wdtype = dtype), the residual stream too (rdtype = dtype). The `dist` column says
`normal` and `seed` holds --seed, as the tool's rows do: the rows share the tool's case keys
(so tables and plots line them up), but the values differ from the tool's host generator
(same distributions, different draws).

Validation: every output the peer exposes is compared on every row with an fp64 reference
computed by torch in float64 on the GPU from the same inputs, with the tool's rules
(harness/validate.h, validate.cpp, ops.cpp): |out - ref| <= atol + rtol*|ref| per element, the
forward tolerances per output dtype (fp32 1e-5/1e-5, fp16 1e-3/1e-3, bf16 1e-2/1e-2; rrms fp32
1e-5/1e-5), s within one ulp of its dtype, dx within atol + rtol*|dx| + u*(8 + 2*sqrt(H))*
dx_scale and dw within atol + rtol*|dw| + u*(4 + 4*sqrt(M))*dw_abs (u = 2^-24, atol half the
smallest subnormal), a reference beyond the dtype's range judged as the correctly rounded inf,
NaN/Inf where the reference is finite a mismatch. The backward reference uses the fp32 rounding
of the exact rrms, as the tool's does. The error columns (max abs/rel/ULP error, mismatches,
worst row/col, atol, rtol, rows_checked = M) follow the tool's record. Not done for peers: the
poison/guard-band scan (a peer allocates its own outputs) and the dw repeatability launch.

Timing, as harness/timing.cpp: 3 warm-up launches, then cold samples, each after a read of a
buffer of twice the L2 size (the tool's default `--flush read`), timed with CUDA events, until
--samples samples and (relative stdev < --max-noise or --max-time spent); median, min, max,
noise (sample stdev / mean, %), samples. Before each sample a short spin kernel
(torch.cuda._sleep) gives the host a head start to enqueue the flush and the whole op, so the
events measure GPU time, not Python dispatch (the tool's C++ launch is enqueued during the
flush). Launches of at most 256 rows are also timed as a CUDA graph of 100 back-to-back calls
(graph_us, per call); a peer that cannot be captured leaves graph_us empty and says why in
`reason`. gbps = bytes / median_us / 1e3 and pct_of_copy = 100 * gbps / copy_gbps, where
copy_gbps is taken from --tool-csv: the tool's rows of the same (dtype, M, H), else its most
common value, so peers and tool share one copy-ceiling measurement of the same device call.
Without --tool-csv (or without timed rows in it) peers.py measures the ceiling itself: a
1 GiB device-to-device copy, bytes read + written, same rule.

Schema: the header is read from --tool-csv and every column is filled by name (unknown
columns empty; a `convention` column gets `fp32`; `ydtype`, `y_scale` stay empty), with the
tool's gpu and cc. Without --tool-csv the rmsnorm-bench/2 header is used.

Failure handling: a missing package, an import error, a compile failure or an unsupported shape
becomes a row (status skip or error, with the reason) and the run goes on; --budget-s turns
the cases not started in time into skip rows. Rows stream into CSV.partial.<pid> (flushed row
by row) and are renamed over --csv when the run ends, however it ends, once at least one row
was written. A CUDA error that leaves the device unusable turns the remaining cases into error
rows. Exit codes: 0 done, 1 a row failed validation, 2 usage or input error, 3 no torch or no
CUDA device, 4 the CUDA context failed mid-run, 130/143 interrupted. --dry-run writes the skip
rows of every case without touching torch or a GPU (to check the CSV's form).

Packages: torch (and triton) from the environment; liger-kernel and helion also from the
wheels in --wheels (default .gpu/wheels, filled by scripts/fetch-wheels.sh), unpacked into a
temporary directory put first on sys.path, so no pip or registry is needed on the GPU machine.
torch is imported only when a case runs: --help and --dry-run need none of these packages.
"""

import argparse
import collections
import csv
import glob
import math
import os
import shutil
import signal
import sys
import tempfile
import time
import zipfile

PEERS = ("torch", "torch-compile", "triton", "liger", "helion")
OPS = ("fwd", "bwd", "add")
DTYPES = ("fp32", "fp16", "bf16")
# Element sizes (core/names.h dtype_size).
DTYPE_SIZE = {"fp32": 4, "fp16": 2, "bf16": 2, "e4m3": 1, "e5m2": 1}
DEFAULT_SEED = 24301  # the tool's --seed default (0x5eed)
GRAPH_MAX_ROWS = 256  # harness/runner.h graph_max_rows
GRAPH_LAUNCHES = 100  # harness/timing.h graph_launches
WARMUP = 3  # harness/timing.h warmup
MAX_SAMPLES = 2000  # harness/timing.h max_samples
COPY_BYTES_EACH_WAY = 1 << 30  # harness/runner.h copy_bytes
CHECK_CHUNK_ELEMS = 1 << 24  # rows compared per step of the fp64 reference

# The rmsnorm-bench/2 header (reports/columns.h), used only without --tool-csv.
SCHEMA2_COLUMNS = (
    "schema,gpu,cc,kernel,picked,provider,provider_version,op,dtype,wdtype,rdtype,M,H,stride,layout,eps,"
    "dist,seed,status,reason,rows_checked,max_abs_err,max_rel_err,max_ulp,mismatches,worst_row,worst_col,"
    "atol,rtol,median_us,min_us,max_us,noise_pct,samples,graph_us,bytes,gbps,copy_gbps,pct_of_copy").split(",")

# harness/validate.cpp: forward tolerances (atol, rtol) per output dtype.
FWD_TOLERANCE = {"fp32": (1e-5, 1e-5), "fp16": (1e-3, 1e-3), "bf16": (1e-2, 1e-2)}
# Half the smallest subnormal of each dtype: the backward outputs' atol.
HALF_MIN_SUBNORMAL = {"fp32": 2.0**-150, "fp16": 2.0**-25, "bf16": 2.0**-134}
U = 2.0**-24  # fp32 unit roundoff
# reference/host_dtype.h: mantissa bits, minimum normal exponent, largest finite value.
DTYPE_TRAITS = {"fp32": (23, -126, 3.4028234663852886e38), "fp16": (10, -14, 65504.0),
                "bf16": (7, -126, 3.3895313892515355e38)}

EXIT_OK, EXIT_FAIL, EXIT_USAGE, EXIT_NO_DEVICE, EXIT_CUDA = 0, 1, 2, 3, 4


class UsageError(Exception):
    pass


# ---- the tool's formulas, in plain Python (no torch) ----------------------------------------

def op_bytes(op, M, H, dtype, wdtype=None, rdtype=None):
    """The fewest bytes the op moves: harness/ops.cpp op_bytes(), which sums elements x element
    size over the op's inputs and outputs (x, w, dy, ds_out, saved rrms / y, residual_out,
    rrms, dx, dw; matrices M*H, per-column H, per-row M; rrms fp32)."""
    sx = DTYPE_SIZE[dtype]
    sw = DTYPE_SIZE[wdtype or dtype]
    sr = DTYPE_SIZE[rdtype or dtype]
    mh = M * H
    if op == "fwd":  # in: x, w        out: y, rrms
        return mh * sx + H * sw + mh * sx + 4 * M
    if op == "bwd":  # in: x, w, dy, saved rrms        out: dx, dw
        return mh * sx + H * sw + mh * sx + 4 * M + mh * sx + H * sw
    if op == "add":  # in: x, r, w        out: y, s, rrms
        return mh * sx + mh * sr + H * sw + mh * sx + mh * sr + 4 * M
    if op == "add-bwd":  # in: s (rdtype), w, dy, ds_out, saved rrms        out: dx (rdtype), dw
        return mh * sr + H * sw + mh * sx + mh * sr + 4 * M + mh * sr + H * sw
    raise ValueError(f"unknown op {op!r}")


def dx_tolerance(dtype, H):
    """(atol, rtol, coefficient of dx_scale): harness/validate.cpp dx_tolerance()."""
    return HALF_MIN_SUBNORMAL[dtype], FWD_TOLERANCE[dtype][1], U * (8.0 + 2.0 * math.sqrt(H))


def dw_tolerance(dtype, M):
    """(atol, rtol, coefficient of dw_abs): harness/validate.cpp dw_tolerance()."""
    return HALF_MIN_SUBNORMAL[dtype], FWD_TOLERANCE[dtype][1], U * (4.0 + 4.0 * math.sqrt(M))


def csv_tolerance(op, dtype, H, rdtype=None):
    """The CSV's (atol, rtol): y's for fwd and add; for bwd and add-bwd dx's rtol (dx is in the
    residual dtype for add-bwd) and the coefficient u*(8 + 2*sqrt(H)) of dx_scale (harness/ops.cpp
    fwd_csv, bwd_csv)."""
    if op in ("bwd", "add-bwd"):
        _, rtol, coef = dx_tolerance(rdtype or dtype if op == "add-bwd" else dtype, H)
        return coef, rtol
    return FWD_TOLERANCE[dtype]


def format_double(v):
    """The shortest text that reads back to v, as the tool writes doubles ("1e-05", "4285")."""
    v = float(v)
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    text = repr(v)
    return text[:-2] if text.endswith(".0") else text


def derived_rates(nbytes, median_us, copy_gbps):
    """gbps and pct_of_copy as the tool writes them (harness/runner.cpp): bytes / median_us / 1e3
    and 100 * gbps / copy_gbps, formatted; pct_of_copy empty without a copy ceiling. The reader
    refuses a row where either does not follow from its bytes, median_us and copy_gbps."""
    gbps = float(nbytes) / (float(median_us) * 1e3)
    pct = format_double(100.0 * gbps / float(copy_gbps)) if copy_gbps not in (None, "") else ""
    return format_double(gbps), pct


def noise_pct(samples):
    """Sample stdev over the mean, in % (harness/timing.cpp noise_pct_of)."""
    n = len(samples)
    if n == 0:
        return 0.0
    mean = sum(samples) / n
    var = sum((x - mean) * (x - mean) for x in samples) / (n - 1) if n > 1 else 0.0
    return 100.0 * math.sqrt(var) / mean if mean > 0 else 0.0


def should_stop(samples, elapsed_s, min_samples, max_noise, max_time):
    """harness/timing.cpp should_stop: min_samples always, then the budget or quiet enough."""
    n = len(samples)
    if n < min_samples:
        return False
    if n >= MAX_SAMPLES or elapsed_s >= max_time:
        return True
    return noise_pct(samples) < max_noise


def summarize(samples):
    """median, min, max, noise %, count (harness/timing.cpp summarize)."""
    v = sorted(samples)
    n = len(v)
    median = v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])
    return {"median_us": median, "min_us": v[0], "max_us": v[-1], "noise_pct": noise_pct(samples), "samples": n}


def clean_reason(text, limit=600):
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 3] + "..."


def config_dict(config):
    """A Helion config's settings as a dict (helion.Config keeps them in .config)."""
    return dict(getattr(config, "config", config))


def config_text(config):
    """A tuned config's settings as short text for the `picked` column: sorted by key, empty
    values (None, [], {}) left out, a list of one repeated value written once with its count
    (indexing=['pointer']*8), so that block sizes, warps and stages fit the column."""
    parts = []
    for key, value in sorted(config_dict(config).items()):
        if value is None or (isinstance(value, (list, tuple, dict)) and not value):
            continue
        if isinstance(value, (list, tuple)) and len(value) > 1 and all(v == value[0] for v in value):
            parts.append(f"{key}=[{value[0]!r}]*{len(value)}")
        else:
            parts.append(f"{key}={value!r}")
    return " ".join(parts)


def exception_text(e):
    lines = [line.strip() for line in str(e).splitlines() if line.strip()]
    return clean_reason(f"{type(e).__name__}: {lines[0] if lines else ''}", 400)


# ---- CLI lists -------------------------------------------------------------------------------

MAX_RANGE_ITEMS = 100000  # the most values one range may hold: the tool's kMaxRangeItems


def parse_int_list(text, option):
    """`4096`, `1024,4096`, `1024:16384:x2` (geometric), `128:1024:+128` (arithmetic)."""
    values = []
    for part in text.split(","):
        part = part.strip()
        try:
            if ":" in part:
                lo, hi, step = part.split(":")
                lo, hi = int(lo), int(hi)
                if hi < lo:
                    raise UsageError(f"{option}: range '{part}' ends before it starts")
                if step.startswith("x") and int(step[1:]) >= 2 and lo >= 1:
                    v, k = lo, int(step[1:])
                    while v <= hi:  # at most log2(hi) values
                        values.append(v)
                        v *= k
                elif step.startswith("+") and int(step[1:]) >= 1:
                    # Counted before it is expanded, as the tool counts (app/lists.h): a range
                    # of 2^63 values would otherwise take the machine's memory.
                    count = (hi - lo) // int(step[1:]) + 1
                    if count > MAX_RANGE_ITEMS:
                        raise UsageError(f"{option}: range '{part}' has {count} values, more than the "
                                         f"{MAX_RANGE_ITEMS} one range may hold")
                    values.extend(range(lo, hi + 1, int(step[1:])))
                else:
                    raise ValueError
            else:
                values.append(int(part))
        except ValueError:
            raise UsageError(f"{option}: '{part}' is not N, N,N or LO:HI:xK / LO:HI:+K") from None
    if not values or any(v < 1 for v in values):
        raise UsageError(f"{option}: every value must be >= 1 (got '{text}')")
    return list(dict.fromkeys(values))


def parse_names(text, allowed, option):
    names = [n.strip() for n in text.split(",") if n.strip()]
    bad = [n for n in names if n not in allowed]
    if bad or not names:
        raise UsageError(f"{option}: unknown '{','.join(bad) or text}' (accepted: {', '.join(allowed)})")
    return list(dict.fromkeys(names))


def parse_eps(text):
    out = []
    for part in text.split(","):
        try:
            v = float(part)
        except ValueError:
            raise UsageError(f"--eps: '{part}' is not a number") from None
        if not math.isfinite(v) or v <= 0:
            raise UsageError(f"--eps: {part} is out of range (accepted: finite and > 0)")
        out.append(v)
    return list(dict.fromkeys(out))


def parse_shape(text):
    parts = text.split(":")
    if len(parts) != 3 or parts[0] not in DTYPES:
        raise UsageError(f"--shape: '{text}' is not DTYPE:M:H (DTYPE one of {', '.join(DTYPES)})")
    try:
        M, H = int(parts[1]), int(parts[2])
    except ValueError:
        raise UsageError(f"--shape: '{text}': M and H must be integers") from None
    if M < 1 or H < 1:
        raise UsageError(f"--shape: '{text}': M and H must be >= 1")
    return parts[0], M, H


def build_parser():
    p = argparse.ArgumentParser(
        prog="scripts/peers.py",
        description="Run the tool's shapes through peer RMSNorm implementations (torch, torch.compile, "
                    "Triton, Liger-Kernel, Helion) and write rows in the tool's CSV schema "
                    "(kernel peer:<name>). See the module docstring for the exact semantics.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Exit codes: 0 done, 1 a row failed validation, 2 usage or input error, 3 no torch or "
               "no CUDA device, 4 the CUDA context failed mid-run, 130/143 interrupted.")
    p.add_argument("--op", default="fwd,bwd,add", help="ops: fwd, bwd, add (default: all three)")
    p.add_argument("--dtype", default=None, help="x/y dtypes: fp32, fp16, bf16 (default bf16 without --shape)")
    p.add_argument("--M", default=None, help="rows, like the tool's --M (default 16384 without --shape)")
    p.add_argument("--H", default=None, help="hidden sizes, like the tool's --H (default 4096 without --shape)")
    p.add_argument("--shape", action="append", default=[], metavar="DTYPE:M:H",
                   help="one more shape, run in the order given, before the --dtype x --M x --H product "
                        "(repeatable)")
    p.add_argument("--eps", default="1e-5", help="eps values (default 1e-5)")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"input seed (default {DEFAULT_SEED})")
    p.add_argument("--peers", default=",".join(PEERS), help=f"peers to run (default {','.join(PEERS)})")
    p.add_argument("--csv", required=False, default="peers.csv", help="output CSV (default peers.csv)")
    p.add_argument("--tool-csv", default=None,
                   help="the tool's CSV of the same device call: header, gpu, cc and copy_gbps come from it")
    p.add_argument("--samples", type=int, default=10, help="minimum cold samples per case (tool's --min-samples)")
    p.add_argument("--max-noise", type=float, default=0.5,
                   help="stop sampling below this relative stdev, %% (tool's --max-noise, default 0.5)")
    p.add_argument("--max-time", type=float, default=0.1,
                   help="timing budget per case after --samples, s (tool's --max-time, default 0.1)")
    p.add_argument("--budget-s", type=float, default=0.0,
                   help="start no case after this many seconds; the rest become skip rows (0: no limit)")
    p.add_argument("--wheels", default=None,
                   help="directory of wheels to import from (default: .gpu/wheels beside scripts/, if present)")
    p.add_argument("--device", type=int, default=0, help="CUDA device index (default 0)")
    p.add_argument("--dry-run", action="store_true",
                   help="write the skip row of every case without torch or a GPU (to check the CSV's form)")
    return p


def parse_args(argv):
    args = build_parser().parse_args(argv)
    args.ops = parse_names(args.op, OPS, "--op")
    args.peer_names = parse_names(args.peers, PEERS, "--peers")
    args.eps_list = parse_eps(args.eps)
    shapes = [parse_shape(s) for s in args.shape]
    if not shapes or args.dtype or args.M or args.H:
        dtypes = parse_names(args.dtype or "bf16", DTYPES, "--dtype")
        Ms = parse_int_list(args.M or "16384", "--M")
        Hs = parse_int_list(args.H or "4096", "--H")
        shapes += [(d, M, H) for d in dtypes for M in Ms for H in Hs]
    args.shapes = list(dict.fromkeys(shapes))
    if args.samples < 1 or args.samples > 100000:
        raise UsageError(f"--samples: {args.samples} is out of range (accepted: 1 to 100000)")
    if not (0 <= args.max_noise <= 100) or not (0 <= args.max_time <= 3600) or args.budget_s < 0:
        raise UsageError("--max-noise must be 0..100, --max-time 0..3600 and --budget-s >= 0")
    return args


# ---- the tool's CSV: header, device, copy ceiling --------------------------------------------

class ToolContext:
    """What peers.py takes from the tool's CSV: the header (schema), gpu, cc and copy_gbps."""

    def __init__(self, header, schema, gpu="", cc="", copy_by_shape=None, copy_default=None, path=None):
        self.header = header
        self.schema = schema
        self.gpu = gpu
        self.cc = cc
        self.copy_by_shape = copy_by_shape or {}
        self.copy_default = copy_default
        self.path = path

    def copy_for(self, dtype, M, H):
        """The copy_gbps text of the tool's rows of this shape, else the file's most common one."""
        return self.copy_by_shape.get((dtype, M, H), self.copy_default)

    @staticmethod
    def default():
        return ToolContext(list(SCHEMA2_COLUMNS), "rmsnorm-bench/2")

    @staticmethod
    def read(path):
        try:
            f = open(path, newline="", encoding="utf-8")
        except OSError as e:
            raise UsageError(f"--tool-csv: {path}: cannot open: {e.strerror}") from None
        with f:
            reader = csv.reader(f)
            header = next(reader, None)
            need = ("schema", "gpu", "cc", "kernel", "op", "dtype", "M", "H", "status", "bytes", "copy_gbps")
            if not header or any(c not in header for c in need):
                raise UsageError(f"{path}:1: not an rmsnorm-bench CSV (the header lacks "
                                 f"{', '.join(c for c in need if c not in (header or []))})")
            col = {name: i for i, name in enumerate(header)}
            schema = gpu = cc = ""
            copy_by_shape = {}
            copies = collections.Counter()
            for fields in reader:
                if not fields:
                    continue
                if len(fields) != len(header):
                    raise UsageError(f"{path}:{reader.line_num}: {len(fields)} fields, the header has {len(header)}")
                if not schema:
                    schema, gpu, cc = fields[col["schema"]], fields[col["gpu"]], fields[col["cc"]]
                copy = fields[col["copy_gbps"]]
                if copy:
                    copies[copy] += 1
                    try:
                        key = (fields[col["dtype"]], int(fields[col["M"]]), int(fields[col["H"]]))
                    except ValueError:
                        raise UsageError(f"{path}:{reader.line_num}: M or H is not an integer") from None
                    copy_by_shape.setdefault(key, copy)
        if not schema:
            raise UsageError(f"{path}: no rows: the tool's CSV names its schema, gpu and copy ceiling in its rows")
        default = copies.most_common(1)[0][0] if copies else None
        return ToolContext(header, schema, gpu, cc, copy_by_shape, default, path)


# ---- rows ------------------------------------------------------------------------------------

class Case:
    def __init__(self, op, dtype, M, H, eps):
        self.op, self.dtype, self.M, self.H, self.eps = op, dtype, M, H, eps

    def label(self):
        return f"{self.op} {self.dtype} M={self.M} H={self.H} eps={format_double(self.eps)}"


def build_row(ctx, case, peer, version, status, reason="", picked="", seed=DEFAULT_SEED, checked=None,
              timing=None, graph_us=None, copy_gbps=None):
    """One CSV row (a list in ctx.header's order) filled by column name.

    checked: {rows_checked, max_abs_err, max_rel_err, max_ulp, mismatches, worst_row, worst_col}
    (zeros and -1 when None). timing: summarize()'s dict, only for pass and fail rows, with
    copy_gbps the ceiling's text as the tool wrote it; gbps and pct_of_copy are derived exactly
    as harness/runner.cpp derives them, so the reader's relations hold.
    """
    atol, rtol = csv_tolerance(case.op, case.dtype, case.H)
    nbytes = op_bytes(case.op, case.M, case.H, case.dtype)
    checked = checked or {}
    v = {
        "schema": ctx.schema, "gpu": ctx.gpu, "cc": ctx.cc, "kernel": f"peer:{peer}",
        "picked": clean_reason(picked or f"peer:{peer}", 400), "provider": "peer", "provider_version": version,
        "op": case.op, "dtype": case.dtype, "wdtype": case.dtype, "rdtype": case.dtype if case.op == "add" else "",
        "M": str(case.M), "H": str(case.H), "stride": str(case.H), "layout": "contiguous",
        "eps": format_double(case.eps), "dist": "normal", "seed": str(seed), "status": status,
        "reason": clean_reason(reason), "rows_checked": str(checked.get("rows_checked", 0)),
        "max_abs_err": format_double(checked.get("max_abs_err", 0.0)),
        "max_rel_err": format_double(checked.get("max_rel_err", 0.0)),
        "max_ulp": format_double(checked.get("max_ulp", 0.0)), "mismatches": str(checked.get("mismatches", 0)),
        "worst_row": str(checked.get("worst_row", -1)), "worst_col": str(checked.get("worst_col", -1)),
        "atol": format_double(atol), "rtol": format_double(rtol), "bytes": str(nbytes),
        # Columns of later schemas that peers.py knows: its kernels follow the fp32 convention
        # and write y in x's dtype with no scale.
        "convention": "fp32", "ydtype": "", "y_scale": "",
    }
    if timing is not None:
        if status not in ("pass", "fail"):
            raise ValueError("only pass and fail rows are timed")
        if copy_gbps is None:
            raise ValueError("a timed row needs the copy ceiling")
        median = timing["median_us"]
        gbps, pct = derived_rates(nbytes, median, copy_gbps)
        v.update({"median_us": format_double(median), "min_us": format_double(timing["min_us"]),
                  "max_us": format_double(timing["max_us"]), "noise_pct": format_double(timing["noise_pct"]),
                  "samples": str(timing["samples"]), "gbps": gbps, "copy_gbps": copy_gbps,
                  "pct_of_copy": pct})
        if graph_us is not None:
            v["graph_us"] = format_double(graph_us)
    return [v.get(name, "") for name in ctx.header]


class RowWriter:
    """Streams rows into PATH.partial.<pid>, flushed row by row; close() renames it over PATH if
    at least one row was written (else removes it and leaves PATH as it was)."""

    def __init__(self, path, header):
        self.path = path
        self.tmp = f"{path}.partial.{os.getpid()}"
        d = os.path.dirname(os.path.abspath(path))
        os.makedirs(d, exist_ok=True)
        self.f = open(self.tmp, "w", newline="", encoding="utf-8")
        self.w = csv.writer(self.f, lineterminator="\n")
        self.w.writerow(header)
        self.f.flush()
        self.rows = 0
        self.statuses = collections.Counter()

    def write(self, row, status):
        self.w.writerow(row)
        self.f.flush()
        self.rows += 1
        self.statuses[status] += 1

    def close(self):
        if self.f is None:
            return
        self.f.close()
        self.f = None
        if self.rows:
            os.replace(self.tmp, self.path)
        else:
            os.remove(self.tmp)


# ---- wheels ----------------------------------------------------------------------------------

def add_wheels(directory):
    """Unpacks every wheel in directory into one temporary directory put first on sys.path (pure
    Python wheels need no installer). Returns that directory, or None."""
    wheels = sorted(glob.glob(os.path.join(directory, "*.whl")))
    if not wheels:
        return None
    target = tempfile.mkdtemp(prefix="peers-wheels-")
    for whl in wheels:
        with zipfile.ZipFile(whl) as z:
            z.extractall(target)
    sys.path.insert(0, target)
    return target


def package_version(*names):
    import importlib.metadata
    for name in names:
        try:
            return importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            continue
    return ""


# ---- measurement (torch from here on) --------------------------------------------------------

class Env:
    """torch, the device and the run's options, shared by the peers and the checks."""

    def __init__(self, torch, args):
        self.torch = torch
        self.args = args
        self.device = torch.device("cuda", args.device)
        torch.cuda.set_device(self.device)
        props = torch.cuda.get_device_properties(self.device)
        self.props = props
        self.sms = props.multi_processor_count
        l2 = int(getattr(props, "L2_cache_size", 0) or (64 << 20))
        flush_bytes = max(2 * l2, 1 << 20) // 16 * 16
        self.flush_buf = torch.full((flush_bytes // 4,), 1.0, dtype=torch.float32, device=self.device)
        self.sleep = getattr(torch.cuda, "_sleep", None)
        # Graphs are captured on this stream, and the autograd peers run their forward on it:
        # a backward runs on its forward's stream, so only then can it be captured.
        self.capture_stream = torch.cuda.Stream(self.device)

    def dtype(self, name):
        t = self.torch
        return {"fp32": t.float32, "fp16": t.float16, "bf16": t.bfloat16}[name]

    def flush(self):
        # The tool's read flush: read twice the L2, so the timed launch starts cold.
        self.flush_buf.sum()

    def cold(self, fn, min_samples=None, max_time=None):
        """Cold samples of fn() in us, harness/timing.cpp time_cold's rule."""
        torch = self.torch
        a = self.args
        min_samples = a.samples if min_samples is None else min_samples
        max_time = a.max_time if max_time is None else max_time
        for _ in range(WARMUP):
            fn()
        torch.cuda.synchronize()
        t = time.perf_counter()
        fn()
        host_us = (time.perf_counter() - t) * 1e6
        torch.cuda.synchronize()
        # A spin of about twice the host's enqueue time (at <= 2 GHz) lets the host queue the
        # flush and the whole op before the GPU reaches them.
        cycles = int(min(20000.0, 2.0 * host_us + 20.0) * 2000)
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        samples = []
        t0 = time.monotonic()
        while not should_stop(samples, time.monotonic() - t0, min_samples, a.max_noise, max_time):
            if self.sleep is not None:
                self.sleep(cycles)
            self.flush()
            start.record()
            fn()
            stop.record()
            stop.synchronize()
            samples.append(1000.0 * start.elapsed_time(stop))
        return summarize(samples)

    def graph(self, fn):
        """Per-call time of GRAPH_LAUNCHES calls of fn captured in one CUDA graph (median over
        replays, the same stopping rule), as harness/timing.cpp time_graph."""
        torch = self.torch
        side = self.capture_stream
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):
            for _ in range(WARMUP):
                fn()
        torch.cuda.current_stream().wait_stream(side)
        torch.cuda.synchronize()
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g, stream=side):
            for _ in range(GRAPH_LAUNCHES):
                fn()
        g.replay()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        stop = torch.cuda.Event(enable_timing=True)
        samples = []
        t0 = time.monotonic()
        a = self.args
        while not should_stop(samples, time.monotonic() - t0, a.samples, a.max_noise, a.max_time):
            start.record()
            g.replay()
            stop.record()
            stop.synchronize()
            samples.append(1000.0 * start.elapsed_time(stop))
        del g
        return summarize(samples)["median_us"] / GRAPH_LAUNCHES

    def copy_ceiling(self):
        """A 1 GiB device-to-device copy, bytes read + written (used only without the tool's)."""
        torch = self.torch
        src = torch.full((COPY_BYTES_EACH_WAY,), 0x3c, dtype=torch.uint8, device=self.device)
        dst = torch.empty_like(src)
        st = self.cold(lambda: dst.copy_(src))
        return format_double(2.0 * COPY_BYTES_EACH_WAY / (st["median_us"] * 1e3))

    def device_ok(self):
        try:
            self.torch.cuda.synchronize()
            return True
        except Exception:  # noqa: BLE001 - any failure here means the context is gone
            return False


class ShapeData:
    """The inputs of one (dtype, M, H) and the fp64 reference quantities shared by every peer."""

    def __init__(self, env, dtype, M, H, seed):
        self.env, self.dtype, self.M, self.H, self.seed = env, dtype, M, H, seed
        self._cache = {}

    def _draw(self, name, seed_xor, shape, mean, scale, dtype):
        if name not in self._cache:
            torch = self.env.torch
            g = torch.Generator(device=self.env.device)
            g.manual_seed((self.seed ^ seed_xor) & 0xFFFFFFFFFFFFFFFF)
            v = torch.randn(shape, generator=g, dtype=torch.float32, device=self.env.device)
            if scale != 1.0:
                v.mul_(scale)
            if mean != 0.0:
                v.add_(mean)
            self._cache[name] = v.to(self.env.dtype(dtype))
        return self._cache[name]

    @property
    def x(self):
        return self._draw("x", 0, (self.M, self.H), 0.0, 1.0, self.dtype)

    @property
    def w(self):
        return self._draw("w", 0x3e1, (self.H,), 1.0, 0.5, self.dtype)

    @property
    def r(self):  # the tool's kResidualSeed
        return self._draw("r", 0x7e51d, (self.M, self.H), 0.0, 1.0, self.dtype)

    @property
    def dy(self):  # the tool's kDySeed; N(3, 1)
        return self._draw("dy", 0xd7, (self.M, self.H), 3.0, 1.0, self.dtype)

    def row_chunks(self):
        step = max(1, CHECK_CHUNK_ELEMS // self.H)
        for r0 in range(0, self.M, step):
            yield r0, min(self.M, r0 + step)

    def rrms_exact(self, eps):
        """1/sqrt(mean(x^2) + eps) per row in fp64."""
        key = ("rrms", eps)
        if key not in self._cache:
            torch = self.env.torch
            out = torch.empty(self.M, dtype=torch.float64, device=self.env.device)
            for r0, r1 in self.row_chunks():
                xd = self.x[r0:r1].double()
                out[r0:r1] = 1.0 / torch.sqrt((xd * xd).mean(-1) + eps)
            self._cache[key] = out
        return self._cache[key]

    def saved_rrms(self, eps):
        """The fp32 rrms the backward reads: the fp32 rounding of the exact one (as the tool's)."""
        key = ("saved", eps)
        if key not in self._cache:
            self._cache[key] = self.rrms_exact(eps).float()
        return self._cache[key]

    def dw_reference(self, eps):
        """(dw, dw_abs) in fp64 over all rows, with the saved rrms."""
        key = ("dw", eps)
        if key not in self._cache:
            torch = self.env.torch
            rr = self.saved_rrms(eps).double()
            dw = torch.zeros(self.H, dtype=torch.float64, device=self.env.device)
            dw_abs = torch.zeros_like(dw)
            for r0, r1 in self.row_chunks():
                t = self.dy[r0:r1].double() * self.x[r0:r1].double() * rr[r0:r1, None]
                dw += t.sum(0)
                dw_abs += t.abs().sum(0)
            self._cache[key] = (dw, dw_abs)
        return self._cache[key]


def ulp_of(torch, v, dtype):
    """reference/host_dtype.cpp ulp_at: the spacing of dtype's values at |v| (v fp64)."""
    mant, min_exp, _ = DTYPE_TRAITS[dtype]
    mag = v.abs()
    _, e = torch.frexp(mag)
    ex = torch.clamp(e.to(torch.int64) - 1, min=min_exp)
    ex = torch.where(mag == 0, torch.full_like(ex, min_exp), ex)
    ulp = torch.ldexp(torch.ones_like(mag), (ex - mant).to(torch.float64))
    return torch.where(torch.isfinite(mag), ulp, mag)


def overflow_threshold(dtype):
    mant, _, fmax = DTYPE_TRAITS[dtype]
    _, e = math.frexp(fmax)
    return fmax + math.ldexp(1.0, e - 1 - mant) / 2


class OutputStats:
    """harness/validate.h ErrorStats over one output, fed chunk by chunk in row order."""

    def __init__(self, name, kind, dtype):
        self.name, self.kind, self.dtype = name, kind, dtype  # kind: matrix, per_row, per_column
        self.max_abs = self.max_rel = self.max_ulp = 0.0
        self.mismatches = 0
        self.worst_row = self.worst_col = -1
        self.worst_ratio = -1.0
        self.first = []

    def add(self, torch, got, want, atol, rtol, row0=0):
        want = want.double()
        got = got.reshape(want.shape).double()
        thr = overflow_threshold(self.dtype)
        ref = torch.where(torch.isfinite(want) & (want.abs() >= thr), torch.copysign(torch.full_like(want, math.inf),
                                                                                   want), want)
        ulp = ulp_of(torch, want, self.dtype)
        fin_ref, fin_got = torch.isfinite(ref), torch.isfinite(got)
        diff = (got - ref).abs()
        bound = atol + rtol * ref.abs()
        ok = torch.where(fin_ref, fin_got & (diff <= bound),
                         torch.where(torch.isnan(ref), torch.isnan(got), got == ref))
        zero, inf = torch.zeros_like(diff), torch.full_like(diff, math.inf)
        err = torch.where(fin_got & fin_ref, diff, torch.where(ok, zero, inf))
        atol_e = atol if torch.is_tensor(atol) else torch.full_like(ref, atol)
        rel_ok = (ref.abs() >= atol_e) & (ref != 0)
        rel = torch.where(rel_ok, err / ref.abs(), zero)
        ulps = torch.where(ulp > 0, err / ulp, zero)
        ratio = torch.where(fin_ref, torch.where(bound > 0, err / bound, torch.where(err > 0, inf, zero)),
                            torch.where(ok, zero, inf))
        self.max_abs = max(self.max_abs, float(err.max()))
        # NaN (inf / inf) counts as nothing, as std::max skips it in the tool; inf stays inf.
        self.max_rel = max(self.max_rel, float(torch.where(torch.isnan(rel), zero, rel).max()))
        self.max_ulp = max(self.max_ulp, float(torch.where(torch.isnan(ulps), zero, ulps).max()))
        flat = ratio.reshape(-1)
        i = int(torch.argmax(flat))
        r = float(flat[i])
        if r > self.worst_ratio:  # ratios are >= 0: the first element always sets it
            self.worst_ratio = r
            self.worst_row, self.worst_col = self._where(i, want, row0)
        bad = ~ok
        n_bad = int(bad.sum())
        if n_bad:
            self.mismatches += n_bad
            need = 5 - len(self.first)
            if need > 0:
                idx = torch.nonzero(bad.reshape(-1)).reshape(-1)[:need].tolist()
                g, wv = got.reshape(-1), ref.reshape(-1)
                for k in idx:
                    self.first.append((*self._where(k, want, row0), float(g[k]), float(wv[k])))

    def _where(self, flat_index, want, row0):
        if self.kind == "matrix":
            cols = want.shape[-1]
            return row0 + flat_index // cols, flat_index % cols
        if self.kind == "per_row":
            return row0 + flat_index, -1
        return -1, flat_index

    def mismatch_text(self, rows_checked):
        """harness/runner.cpp mismatch_text."""
        if self.kind == "matrix":
            m = f"{self.name}: {self.mismatches} mismatch(es) in {rows_checked} checked rows:"
            for row, col, got, ref in self.first:
                m += f" ({row}, {col}) got {got:.6g} want {ref:.6g}"
        else:
            m = f"{self.name}: {self.mismatches} mismatch(es):"
            for row, col, got, ref in self.first:
                m += f" col {col} got {got:.8g} want {ref:.8g}" if self.kind == "per_column" else \
                     f" row {row} got {got:.8g} want {ref:.8g}"
        return m


def check_outputs(env, case, data, outs):
    """Compares the peer's outputs with the fp64 reference; returns (stats of each output, main
    first), as harness/ops.cpp's descriptions list them."""
    torch = env.torch
    dt, eps, H = case.dtype, case.eps, case.H
    wd = data.w.double()
    if case.op in ("fwd", "add"):
        y = OutputStats("y", "matrix", dt)
        s = OutputStats("residual_out", "matrix", dt) if case.op == "add" else None
        rr = OutputStats("rrms", "per_row", "fp32") if "rrms" in outs else None
        atol, rtol = FWD_TOLERANCE[dt]
        for r0, r1 in data.row_chunks():
            sd = data.x[r0:r1].double()
            if case.op == "add":
                sd = sd + data.r[r0:r1].double()
            rrms = 1.0 / torch.sqrt((sd * sd).mean(-1) + eps)
            y.add(torch, outs["y"][r0:r1], sd * rrms[:, None] * wd, atol, rtol, r0)
            if s is not None:
                s.add(torch, outs["s"][r0:r1], sd, ulp_of(torch, sd, dt), 0.0, r0)
            if rr is not None:
                rr.add(torch, outs["rrms"][r0:r1], rrms, *FWD_TOLERANCE["fp32"], r0)
        return [t for t in (y, s, rr) if t is not None]
    # bwd: dx on every row, dw on every column (the reference sums all rows).
    dx = OutputStats("dx", "matrix", dt)
    dw = OutputStats("dw", "per_column", dt)
    dx_atol, dx_rtol, dx_coef = dx_tolerance(dt, H)
    dw_atol, dw_rtol, dw_coef = dw_tolerance(dt, case.M)
    saved = data.saved_rrms(eps).double()
    for r0, r1 in data.row_chunks():
        xd, dyd = data.x[r0:r1].double(), data.dy[r0:r1].double()
        rr = saved[r0:r1, None]
        g = dyd * wd
        c = rr * rr * rr / H
        want = rr * g - xd * (c * (g * xd).sum(-1, keepdim=True))
        scale = rr * g.abs() + xd.abs() * (c * (g * xd).abs().sum(-1, keepdim=True))
        dx.add(torch, outs["dx"][r0:r1], want, dx_atol + dx_coef * scale, dx_rtol, r0)
    dw_want, dw_abs = data.dw_reference(eps)
    dw.add(torch, outs["dw"], dw_want, dw_atol + dw_coef * dw_abs, dw_rtol)
    return [dx, dw]


def verdict(stats, rows_checked):
    """(status, reason, checked columns) from the outputs' stats, as harness/runner.cpp fills the
    record: the main output's metrics unless only another output mismatched."""
    shown = stats[0]
    reasons = []
    total = 0
    for s in stats:
        total += s.mismatches
        if s.mismatches:
            reasons.append(s.mismatch_text(rows_checked))
            if not shown.mismatches:
                shown = s
    checked = {"rows_checked": rows_checked, "max_abs_err": shown.max_abs, "max_rel_err": shown.max_rel,
               "max_ulp": shown.max_ulp, "mismatches": total, "worst_row": shown.worst_row,
               "worst_col": -1 if shown.kind == "per_row" else shown.worst_col}
    return ("fail" if total else "pass"), "; ".join(reasons), checked


# ---- the peers -------------------------------------------------------------------------------

class PeerUnavailable(Exception):
    """The peer's package cannot be imported: its rows are skips with this reason."""


class Prepared:
    """A peer's op on one shape: run() launches it and returns its outputs by name."""

    def __init__(self, run, picked="", notes=""):
        self.run = run
        self.picked = picked
        self.notes = notes


def autograd_backward(env, data, forward, weight=None):
    """bwd through autograd: forward(x) once (not timed), then run() = the backward alone for dy.
    weight: the tensor whose gradient is dw (a module's parameter), else a leaf copy of w."""
    torch = env.torch
    x = data.x.detach().requires_grad_(True)
    w = weight if weight is not None else data.w.detach().requires_grad_(True)
    # The forward on the capture stream (see Env.capture_stream); autograd orders the backward
    # after the caller's stream, so timing on the current stream still covers it.
    here = torch.cuda.current_stream()
    env.capture_stream.wait_stream(here)
    with torch.cuda.stream(env.capture_stream):
        y = forward(x, w)
    here.wait_stream(env.capture_stream)
    dy = data.dy.clone()  # Liger's in-place backward overwrites it

    def run():
        dx, dw = torch.autograd.grad(y, (x, w), dy, retain_graph=True)
        return {"dx": dx, "dw": dw}

    return Prepared(run)


class Peer:
    name = ""
    ops = OPS

    def __init__(self, env):
        self.env = env
        self._state = None  # None: not loaded; an Exception: unavailable

    def load(self):
        if self._state is None:
            try:
                self._load()
                self._state = True
            except Exception as e:  # noqa: BLE001 - an import failure of any kind becomes a skip
                self._state = PeerUnavailable(f"peer:{self.name} unavailable: {exception_text(e)}")
        if isinstance(self._state, Exception):
            raise self._state

    def _load(self):
        pass

    def version(self):
        return ""

    def unsupported(self, case):
        if case.op not in self.ops:
            return f"peer:{self.name} has no {case.op}"
        return None

    def prepare(self, case, data):
        raise NotImplementedError


class TorchPeer(Peer):
    name = "torch"

    def version(self):
        return self.env.torch.__version__

    def prepare(self, case, data):
        F = self.env.torch.nn.functional
        H, eps = case.H, case.eps
        if case.op == "fwd":
            return Prepared(lambda: {"y": F.rms_norm(data.x, (H,), data.w, eps)}, "F.rms_norm")
        if case.op == "add":
            def run():
                s = data.x + data.r
                return {"y": F.rms_norm(s, (H,), data.w, eps), "s": s}
            return Prepared(run, "x + r, F.rms_norm")
        p = autograd_backward(self.env, data, lambda x, w: F.rms_norm(x, (H,), w, eps))
        p.picked = "autograd of F.rms_norm"
        return p


class TorchCompilePeer(Peer):
    name = "torch-compile"

    def _load(self):
        torch = self.env.torch
        import torch._dynamo  # noqa: F401
        cfg = torch._dynamo.config
        # Every shape is a recompile of the same code: raise the limits (past them dynamo would
        # quietly run eager) and fail instead of falling back.
        for limit in ("cache_size_limit", "recompile_limit", "accumulated_cache_size_limit",
                      "accumulated_recompile_limit"):
            try:
                setattr(cfg, limit, 4096)
            except (AttributeError, TypeError, ValueError):
                pass  # not in this torch
        try:
            cfg.fail_on_recompile_limit_hit = True
        except (AttributeError, TypeError, ValueError):
            pass
        self._compiled = {}

    def version(self):
        return self.env.torch.__version__

    def _functions(self, eps):
        """The reference, compiled once per eps (eps a constant of the graph, as in a model)."""
        if eps not in self._compiled:
            torch = self.env.torch

            def rmsnorm(x, w):
                xf = x.float()
                rr = torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps)
                return (xf * rr * w.float()).to(x.dtype)

            def add_rmsnorm(x, r, w):
                s = x.float() + r.float()
                rr = torch.rsqrt(s.pow(2).mean(-1, keepdim=True) + eps)
                return (s * rr * w.float()).to(x.dtype), s.to(r.dtype)

            opts = dict(dynamic=False, fullgraph=True)
            self._compiled[eps] = (torch.compile(rmsnorm, **opts), torch.compile(add_rmsnorm, **opts))
        return self._compiled[eps]

    def prepare(self, case, data):
        fwd, add = self._functions(case.eps)
        if case.op == "fwd":
            return Prepared(lambda: {"y": fwd(data.x, data.w)}, "inductor")
        if case.op == "add":
            def run():
                y, s = add(data.x, data.r, data.w)
                return {"y": y, "s": s}
            return Prepared(run, "inductor")
        p = autograd_backward(self.env, data, fwd)
        p.picked = "inductor (compiled backward)"
        return p


class TritonPeer(Peer):
    name = "triton"

    def _load(self):
        from peer_kernels import triton_rmsnorm  # imports triton
        self.k = triton_rmsnorm

    def version(self):
        try:
            import triton
            return triton.__version__
        except Exception:  # noqa: BLE001
            return ""

    def prepare(self, case, data):
        k, eps = self.k, case.eps
        p = Prepared(None)
        if case.op in ("fwd", "add"):
            residual = data.r if case.op == "add" else None

            def run():
                y, s, rrms, p.picked = k.rmsnorm_fwd(data.x, data.w, eps, residual)
                out = {"y": y, "rrms": rrms}
                if s is not None:
                    out["s"] = s
                return out
        else:
            rrms = data.saved_rrms(eps)

            def run():
                dx, dw, p.picked = k.rmsnorm_bwd(data.dy, data.x, data.w, rrms)
                return {"dx": dx, "dw": dw}
        p.run = run
        return p


class LigerPeer(Peer):
    name = "liger"

    def _load(self):
        from liger_kernel.transformers.rms_norm import LigerRMSNorm
        self.rmsnorm_cls = LigerRMSNorm
        try:
            from liger_kernel.transformers.fused_add_rms_norm import LigerFusedAddRMSNorm
            self.add_cls = LigerFusedAddRMSNorm
        except ImportError as e:
            self.add_cls = None
            self.add_missing = exception_text(e)

    def version(self):
        return package_version("liger_kernel", "liger-kernel")

    def unsupported(self, case):
        if case.H > 65536:
            return "Liger holds a row of at most 65536 columns in one block (calculate_settings)"
        if case.op == "add" and self.add_cls is None:
            return f"this Liger-Kernel has no LigerFusedAddRMSNorm ({self.add_missing})"
        return super().unsupported(case)

    def _module(self, cls, case, data, requires_grad, **kw):
        torch = self.env.torch
        mod = cls(case.H, eps=case.eps, offset=0.0, casting_mode="gemma", **kw).to(self.env.device)
        mod.weight = torch.nn.Parameter(data.w.detach().clone(), requires_grad=requires_grad)
        return mod

    def prepare(self, case, data):
        if case.op == "fwd":
            mod = self._module(self.rmsnorm_cls, case, data, False, in_place=True)
            return Prepared(lambda: {"y": mod(data.x)}, "LigerRMSNorm casting_mode=gemma")
        if case.op == "add":
            mod = self._module(self.add_cls, case, data, False, in_place=False)

            def run():
                y, s = mod(data.x, data.r)
                return {"y": y, "s": s}
            return Prepared(run, "LigerFusedAddRMSNorm casting_mode=gemma")
        mod = self._module(self.rmsnorm_cls, case, data, True, in_place=True)
        p = autograd_backward(self.env, data, lambda x, w: mod(x), weight=mod.weight)
        p.picked = "LigerRMSNorm casting_mode=gemma in_place=True"
        return p


def helion_shim(torch):
    # helion's autotuner/logger.py imports IntelGPUError from torch._inductor.runtime.triton_compat,
    # which torch 2.11 does not define yet; helion only catches it, so a class never raised will do.
    import torch._inductor.runtime.triton_compat as triton_compat
    if not hasattr(triton_compat, "IntelGPUError"):
        triton_compat.IntelGPUError = type("IntelGPUError", (Exception,), {})


class HelionPeer(Peer):
    name = "helion"
    ops = ("fwd", "bwd")

    def _load(self):
        helion_shim(self.env.torch)
        import helion
        from peer_kernels import helion_rmsnorm
        self.helion = helion
        self.k = helion_rmsnorm

    def version(self):
        return package_version("helion")

    def unsupported(self, case):
        if case.op == "add":
            return "Helion's rms_norm example has no residual add"
        return super().unsupported(case)

    def _candidates(self, base, H):
        """Helion's default config, num_warps doubled and halved, and for short rows four
        times the first block size (rows per tile)."""
        helion = self.helion
        d = config_dict(base)
        out = [base]
        nw = d.get("num_warps")
        if isinstance(nw, int):
            for alt in (nw * 2, nw // 2):
                if 1 <= alt <= 32:
                    out.append(helion.Config(**{**d, "num_warps": alt}))
        bs = d.get("block_sizes")
        if H <= 2048 and isinstance(bs, list) and bs and isinstance(bs[0], int):
            out.append(helion.Config(**{**d, "block_sizes": [bs[0] * 4] + list(bs[1:])}))
        seen, unique = set(), []
        for c in out:
            if repr(c) not in seen:
                seen.add(repr(c))
                unique.append(c)
        return unique

    def _tuned(self, kernel, args, H):
        """The kernel bound to args with the fastest of the candidate configs (each compiled
        and timed with 5 cold samples); the failures are returned as a note."""
        torch = self.env.torch
        bound = kernel.bind(args)
        best, best_us, failed = None, math.inf, []
        for cfg in self._candidates(bound.config_spec.default_config(), H):
            try:
                bound.set_config(cfg)
                bound(*args)
                torch.cuda.synchronize()
                us = self.env.cold(lambda: bound(*args), min_samples=5, max_time=0.0)["median_us"]
            except Exception as e:  # noqa: BLE001 - a config that does not compile is skipped
                if not self.env.device_ok():
                    raise
                failed.append(exception_text(e))
                continue
            if us < best_us:
                best, best_us = cfg, us
        if best is None:
            raise RuntimeError("no candidate config compiled: " + " | ".join(failed))
        bound.set_config(best)
        note = f"{len(failed)} candidate config(s) failed: {failed[0]}" if failed else ""
        return bound, "helion " + config_text(best), note

    def prepare(self, case, data):
        k = self.k
        if case.op == "fwd":
            args = (data.x, data.w, case.eps)
            bound, picked, note = self._tuned(k.rms_norm_fwd, args, case.H)

            def run():
                y, rrms = bound(*args)
                return {"y": y, "rrms": rrms}
        else:
            args = (data.dy, data.x, data.w, data.saved_rrms(case.eps))
            bound, picked, note = self._tuned(k.rms_norm_bwd, args, case.H)

            def run():
                dx, dw = bound(*args)
                return {"dx": dx, "dw": dw}
        return Prepared(run, picked, note)


PEER_CLASSES = {c.name: c for c in (TorchPeer, TorchCompilePeer, TritonPeer, LigerPeer, HelionPeer)}


# ---- the run ---------------------------------------------------------------------------------

def cases_of(args):
    """(shape, eps, peer, op) in run order: shapes in the order given, each with every peer."""
    for dtype, M, H in args.shapes:
        for eps in args.eps_list:
            for peer in args.peer_names:
                for op in args.ops:
                    yield (dtype, M, H), Case(op, dtype, M, H, eps), peer


def dry_run(args, ctx):
    writer = RowWriter(args.csv, ctx.header)
    try:
        for _, case, peer in cases_of(args):
            writer.write(build_row(ctx, case, peer, "", "skip", "dry run: not measured", seed=args.seed), "skip")
    finally:
        writer.close()
    print(f"peers: {writer.rows} skip rows (dry run) in {args.csv}", file=sys.stderr)
    return EXIT_OK


class Interrupted(BaseException):
    def __init__(self, code):
        super().__init__(code)
        self.code = code


def run_case(env, ctx, peer, case, data):
    """One row: (status, row). Never raises for a peer's own failure."""
    args = env.args
    torch = env.torch
    name = peer.name
    try:
        peer.load()
    except PeerUnavailable as e:
        return "skip", build_row(ctx, case, name, "", "skip", str(e), seed=args.seed)
    version = peer.version()
    why = peer.unsupported(case)
    if why:
        return "skip", build_row(ctx, case, name, version, "skip", why, seed=args.seed)

    def failed(stage, e, picked=""):
        if not env.device_ok():
            raise e  # the context is gone: measure_with turns the rest into error rows
        if isinstance(e, torch.cuda.OutOfMemoryError):
            torch.cuda.empty_cache()
        return "error", build_row(ctx, case, name, version, "error", f"{stage} failed: {exception_text(e)}",
                                  picked=picked, seed=args.seed)

    try:
        prepared = peer.prepare(case, data)
        outs = prepared.run()
        torch.cuda.synchronize()
    except Exception as e:  # noqa: BLE001 - compile errors, unsupported shapes, OOM: a row each
        return failed("prepare/launch", e)
    try:
        stats = check_outputs(env, case, data, outs)
    except Exception as e:  # noqa: BLE001
        return failed("check", e, prepared.picked)
    del outs
    status, reason, checked = verdict(stats, case.M)
    notes = [prepared.notes] if prepared.notes else []
    timing = graph_us = None
    copy = ctx.copy_for(case.dtype, case.M, case.H)
    try:
        timing = env.cold(prepared.run)
        if case.M <= GRAPH_MAX_ROWS:
            try:
                graph_us = env.graph(prepared.run)
            except Exception as e:  # noqa: BLE001 - some peers cannot be captured
                if not env.device_ok():
                    raise
                notes.append(f"graph capture failed: {exception_text(e)}")
    except Exception as e:  # noqa: BLE001
        if not env.device_ok():
            raise
        timing = None
        notes.append(f"timing failed: {exception_text(e)}")
    reason = "; ".join([r for r in [reason] + notes if r])
    row = build_row(ctx, case, name, version, status, reason, prepared.picked, args.seed, checked,
                    timing, graph_us, copy)
    return status, row


def measure(args, ctx):
    wheels = args.wheels or os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".gpu", "wheels")
    unpacked = add_wheels(wheels) if os.path.isdir(wheels) else None
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # peer_kernels/
    try:
        try:
            import torch
        except Exception as e:  # noqa: BLE001
            print(f"peers: cannot import torch: {exception_text(e)}", file=sys.stderr)
            return EXIT_NO_DEVICE
        if not torch.cuda.is_available() or args.device >= torch.cuda.device_count():
            print(f"peers: no usable CUDA device {args.device} (torch {torch.__version__} sees "
                  f"{torch.cuda.device_count() if torch.cuda.is_available() else 0})", file=sys.stderr)
            return EXIT_NO_DEVICE
        return measure_with(torch, args, ctx)
    finally:
        if unpacked:
            shutil.rmtree(unpacked, ignore_errors=True)


def measure_with(torch, args, ctx):
    env = Env(torch, args)
    name = torch.cuda.get_device_name(env.device)
    cc = "{}.{}".format(*torch.cuda.get_device_capability(env.device))
    if not ctx.gpu:
        ctx.gpu, ctx.cc = name, cc
    elif ctx.gpu != name:
        print(f"peers: warning: --tool-csv is from '{ctx.gpu}', this device is '{name}'", file=sys.stderr)
    if ctx.copy_default is None:
        ctx.copy_default = env.copy_ceiling()
        print(f"peers: no copy ceiling in --tool-csv: measured {ctx.copy_default} GB/s", file=sys.stderr)
    peers = {n: PEER_CLASSES[n](env) for n in args.peer_names}
    writer = RowWriter(args.csv, ctx.header)
    t0 = time.monotonic()
    broken = None
    data = None
    cases = list(cases_of(args))
    try:
        for i, (shape, case, peer_name) in enumerate(cases, 1):
            if data is None or (data.dtype, data.M, data.H) != shape:
                data = None
                torch.cuda.empty_cache()
                if broken is None:
                    data = ShapeData(env, *shape, args.seed)
            if broken is not None:
                status, row = "error", build_row(ctx, case, peer_name, "", "error",
                                                 f"not run: the CUDA context failed earlier ({broken})",
                                                 seed=args.seed)
            elif args.budget_s and time.monotonic() - t0 > args.budget_s:
                status, row = "skip", build_row(ctx, case, peer_name, "", "skip",
                                                f"not run: --budget-s {format_double(args.budget_s)} spent",
                                                seed=args.seed)
            else:
                try:
                    status, row = run_case(env, ctx, peers[peer_name], case, data)
                except Exception as e:  # noqa: BLE001 - the device is gone (device_ok said so)
                    broken = exception_text(e)
                    status, row = "error", build_row(ctx, case, peer_name, "", "error",
                                                     f"CUDA context failed: {broken}", seed=args.seed)
            writer.write(row, status)
            col = {n: j for j, n in enumerate(ctx.header)}
            pct = row[col["pct_of_copy"]] if "pct_of_copy" in col else ""
            us = row[col["median_us"]] if "median_us" in col else ""
            shown = f"{float(pct):.1f}% of copy, {float(us):.2f} us" if pct else row[col["reason"]][:120]
            print(f"[{i}/{len(cases)} {time.monotonic() - t0:.0f}s] peer:{peer_name} {case.label()}: {status} "
                  f"{shown}", file=sys.stderr, flush=True)
    finally:
        writer.close()
    st = writer.statuses
    print(f"peers: {st['pass']} pass, {st['fail']} fail, {st['skip']} skip, {st['error']} error "
          f"-> {args.csv}", file=sys.stderr)
    if broken is not None:
        return EXIT_CUDA
    return EXIT_FAIL if st["fail"] else EXIT_OK


def main(argv):
    try:
        args = parse_args(argv)
        ctx = ToolContext.read(args.tool_csv) if args.tool_csv else ToolContext.default()
    except UsageError as e:
        print(f"peers: {e}", file=sys.stderr)
        return EXIT_USAGE
    if args.dry_run:
        return dry_run(args, ctx)

    def interrupted(signum, _frame):
        raise Interrupted(130 if signum == signal.SIGINT else 143)

    signal.signal(signal.SIGTERM, interrupted)
    signal.signal(signal.SIGINT, interrupted)
    try:
        return measure(args, ctx)
    except Interrupted as e:
        print(f"peers: interrupted; the rows written so far are in {args.csv}", file=sys.stderr)
        return e.code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
