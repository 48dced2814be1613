"""RMSNorm in Triton, written for rmsnorm-bench as the `peer:triton` kernel of scripts/peers.py.

Strategy: a persistent grid (the SM count times 1 to 8 programs, by block size); program p
walks the row tiles p, p + P, p + 2P, ... A tile is BLOCK_M rows x BLOCK_N columns held in
registers (BLOCK_N = the next power of two >= H; BLOCK_M > 1 only for short rows, so a tile
holds at least 2048 elements): each input is read once and each output written once. Rows
longer than SINGLE_PASS_MAX take the chunked kernels, which walk a row in CHUNK-column steps
twice (sum of squares, then the outputs), the second pass re-reading the row (from L2 when it
is still there). Good at: any H with 16-bit or fp32 data in contiguous rows; the masked
power-of-two tile wastes registers, not bandwidth, at odd H.

Numerics (the project's `fp32` convention): inputs upcast to fp32, fp32 accumulation, eps
inside the sqrt (rsqrt(mean(x^2) + eps)), w of shape (H,) indexed by column only, one
rounding at the output, masked loads and stores for any H >= 1 (no alignment assumed beyond
the element's), rrms = 1/rms saved in fp32 per row. add: s = x + r in fp32, stored once in
r's dtype, and y computed from the fp32 s.

Backward: dx per row from x, dy, w and the saved fp32 rrms, dx = rrms*g - x*(rrms^3/H)*sum(g*x)
with g = dy*w; dw as one fp32 partial row per program (each program sums its own rows in
order), then a second kernel sums the partials of each column in program order: no atomics,
bitwise repeatable.

Limits: contiguous rows only (row stride = H); x, y, dy, dx and the residual stream share one
dtype per call; w any float dtype.
"""

import torch
import triton
import triton.language as tl

SINGLE_PASS_MAX = 32768  # widest power-of-two tile held in registers (fwd and bwd)
CHUNK = 8192  # columns per step of the chunked kernels
MIN_TILE = 2048  # elements per tile: short rows are stacked BLOCK_M high to reach it


@triton.jit
def _fwd_tile_kernel(X, R, W, Y, S, RRMS, M, H, eps, HAS_RES: tl.constexpr, BLOCK_M: tl.constexpr,
                     BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    n_tiles = tl.cdiv(M, BLOCK_M)
    for tile in range(pid, n_tiles, nprog):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        rmask = rows < M
        mask = rmask[:, None] & cmask[None, :]
        offs = rows.to(tl.int64)[:, None] * H + cols[None, :]
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        if HAS_RES:
            x += tl.load(R + offs, mask=mask, other=0.0).to(tl.float32)
            tl.store(S + offs, x.to(S.dtype.element_ty), mask=mask)
        rr = tl.rsqrt(tl.sum(x * x, axis=1) / H + eps)
        tl.store(Y + offs, (x * rr[:, None] * w[None, :]).to(Y.dtype.element_ty), mask=mask)
        tl.store(RRMS + rows, rr, mask=rmask)


@triton.jit
def _fwd_chunked_kernel(X, R, W, Y, S, RRMS, M, H, eps, HAS_RES: tl.constexpr, CHUNK: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    for row in range(pid, M, nprog):
        base = row.to(tl.int64) * H
        acc = tl.zeros([CHUNK], dtype=tl.float32)
        for c0 in range(0, H, CHUNK):
            cols = c0 + tl.arange(0, CHUNK)
            m = cols < H
            x = tl.load(X + base + cols, mask=m, other=0.0).to(tl.float32)
            if HAS_RES:
                x += tl.load(R + base + cols, mask=m, other=0.0).to(tl.float32)
                tl.store(S + base + cols, x.to(S.dtype.element_ty), mask=m)
            acc += x * x
        rr = tl.rsqrt(tl.sum(acc, axis=0) / H + eps)
        for c0 in range(0, H, CHUNK):
            cols = c0 + tl.arange(0, CHUNK)
            m = cols < H
            # x + r again in fp32 (not the rounded s), so y sees the same s as the first pass.
            x = tl.load(X + base + cols, mask=m, other=0.0).to(tl.float32)
            if HAS_RES:
                x += tl.load(R + base + cols, mask=m, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
            tl.store(Y + base + cols, (x * rr * w).to(Y.dtype.element_ty), mask=m)
        tl.store(RRMS + row, rr)


@triton.jit
def _bwd_tile_kernel(X, W, DY, RRMS, DX, DWP, M, H, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    cols = tl.arange(0, BLOCK_N)
    cmask = cols < H
    w = tl.load(W + cols, mask=cmask, other=0.0).to(tl.float32)
    dw = tl.zeros([BLOCK_N], dtype=tl.float32)
    n_tiles = tl.cdiv(M, BLOCK_M)
    for tile in range(pid, n_tiles, nprog):
        rows = tile * BLOCK_M + tl.arange(0, BLOCK_M)
        rmask = rows < M
        mask = rmask[:, None] & cmask[None, :]
        offs = rows.to(tl.int64)[:, None] * H + cols[None, :]
        x = tl.load(X + offs, mask=mask, other=0.0).to(tl.float32)
        dy = tl.load(DY + offs, mask=mask, other=0.0).to(tl.float32)
        rr = tl.load(RRMS + rows, mask=rmask, other=0.0)
        g = dy * w[None, :]
        c = rr * rr * rr / H * tl.sum(g * x, axis=1)
        tl.store(DX + offs, (rr[:, None] * g - x * c[:, None]).to(DX.dtype.element_ty), mask=mask)
        dw += tl.sum(dy * x * rr[:, None], axis=0)
    tl.store(DWP + pid.to(tl.int64) * H + cols, dw, mask=cmask)


@triton.jit
def _bwd_chunked_kernel(X, W, DY, RRMS, DX, DWP, M, H, CHUNK: tl.constexpr):
    # DWP starts zeroed: each program adds its rows into its own partial row, chunk by chunk.
    pid = tl.program_id(0)
    nprog = tl.num_programs(0)
    pbase = pid.to(tl.int64) * H
    for row in range(pid, M, nprog):
        base = row.to(tl.int64) * H
        rr = tl.load(RRMS + row)
        acc = tl.zeros([CHUNK], dtype=tl.float32)
        for c0 in range(0, H, CHUNK):
            cols = c0 + tl.arange(0, CHUNK)
            m = cols < H
            x = tl.load(X + base + cols, mask=m, other=0.0).to(tl.float32)
            dy = tl.load(DY + base + cols, mask=m, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
            acc += dy * w * x
        c = rr * rr * rr / H * tl.sum(acc, axis=0)
        for c0 in range(0, H, CHUNK):
            cols = c0 + tl.arange(0, CHUNK)
            m = cols < H
            x = tl.load(X + base + cols, mask=m, other=0.0).to(tl.float32)
            dy = tl.load(DY + base + cols, mask=m, other=0.0).to(tl.float32)
            w = tl.load(W + cols, mask=m, other=0.0).to(tl.float32)
            tl.store(DX + base + cols, (rr * dy * w - x * c).to(DX.dtype.element_ty), mask=m)
            part = tl.load(DWP + pbase + cols, mask=m, other=0.0)
            tl.store(DWP + pbase + cols, part + dy * x * rr, mask=m)


@triton.jit
def _dw_reduce_kernel(DWP, DW, P, H, BLOCK: tl.constexpr):
    cols = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = cols < H
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for p in range(0, P):
        acc += tl.load(DWP + p * H + cols, mask=m, other=0.0)
    tl.store(DW + cols, acc.to(DW.dtype.element_ty), mask=m)


def _sm_count(device):
    return torch.cuda.get_device_properties(device).multi_processor_count


def _tile(H, elems_per_warp):
    """(BLOCK_M, BLOCK_N, num_warps) of the single-pass kernels, or None past SINGLE_PASS_MAX."""
    block_n = triton.next_power_of_2(H)
    if block_n > SINGLE_PASS_MAX:
        return None
    block_m = max(1, MIN_TILE // block_n)
    warps = min(32, max(4, block_m * block_n // elems_per_warp))
    return block_m, block_n, warps


def _programs(work_items, warps, device):
    # About 32 warps resident per SM: enough loads in flight for a memory-bound kernel.
    return max(1, min(work_items, _sm_count(device) * max(1, 32 // warps)))


def _check(x, *others):
    if x.dim() != 2 or not x.is_contiguous():
        raise ValueError("peer:triton takes contiguous 2-D rows")
    for t in others:
        if t is not None and not t.is_contiguous():
            raise ValueError("peer:triton takes contiguous tensors")


def rmsnorm_fwd(x, w, eps, residual=None):
    """y (x's dtype), s (residual's dtype, or None), rrms (fp32, M), and a description of the
    launch for the CSV's `picked` column."""
    _check(x, w, residual)
    M, H = x.shape
    y = torch.empty_like(x)
    rrms = torch.empty(M, dtype=torch.float32, device=x.device)
    s = torch.empty_like(residual) if residual is not None else None
    has_res = residual is not None
    r_arg = residual if has_res else x
    s_arg = s if has_res else y
    tile = _tile(H, 512)
    if tile is not None:
        block_m, block_n, warps = tile
        grid = _programs(triton.cdiv(M, block_m), warps, x.device)
        _fwd_tile_kernel[(grid,)](x, r_arg, w, y, s_arg, rrms, M, H, eps, HAS_RES=has_res, BLOCK_M=block_m,
                                  BLOCK_N=block_n, num_warps=warps)
        picked = f"tile {block_m}x{block_n} warps={warps} programs={grid}"
    else:
        grid = _programs(M, 16, x.device)
        _fwd_chunked_kernel[(grid,)](x, r_arg, w, y, s_arg, rrms, M, H, eps, HAS_RES=has_res, CHUNK=CHUNK,
                                     num_warps=16)
        picked = f"chunked {CHUNK} warps=16 programs={grid}"
    return y, s, rrms, picked


def rmsnorm_bwd(dy, x, w, rrms):
    """dx (x's dtype), dw (w's dtype) from the saved fp32 rrms, and the launch description."""
    _check(x, dy, w, rrms)
    M, H = x.shape
    dx = torch.empty_like(x)
    dw = torch.empty_like(w)
    tile = _tile(H, 256)
    if tile is not None:
        block_m, block_n, warps = tile
        grid = _programs(triton.cdiv(M, block_m), warps, x.device)
        dwp = torch.empty((grid, H), dtype=torch.float32, device=x.device)
        _bwd_tile_kernel[(grid,)](x, w, dy, rrms, dx, dwp, M, H, BLOCK_M=block_m, BLOCK_N=block_n,
                                  num_warps=warps)
        picked = f"tile {block_m}x{block_n} warps={warps} programs={grid}"
    else:
        grid = _programs(M, 16, x.device)
        dwp = torch.zeros((grid, H), dtype=torch.float32, device=x.device)
        _bwd_chunked_kernel[(grid,)](x, w, dy, rrms, dx, dwp, M, H, CHUNK=CHUNK, num_warps=16)
        picked = f"chunked {CHUNK} warps=16 programs={grid}"
    reduce_block = 1024
    _dw_reduce_kernel[(triton.cdiv(H, reduce_block),)](dwp, dw, grid, H, BLOCK=reduce_block, num_warps=4)
    return dx, dw, picked + " + dw reduce"
