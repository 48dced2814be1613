"""RMSNorm in Helion: the `peer:helion` kernels of scripts/peers.py.

The algorithm of Helion's examples/rms_norm.py (not shipped in the helion wheel), written
again here for this project: the forward takes a tile of rows per program, upcasts to fp32,
reduces the whole row (rsqrt(mean(x^2) + eps), eps inside the sqrt) and writes y, rounded
once, and rrms; the backward gives each block of rows one fp32 partial row of dw (summed over
its rows in order), writes dx per row, and sums the partials on the host side (torch.sum over
the block axis, no atomics). One difference from the example: rrms is saved and read in fp32
(the example keeps it in x's dtype), as the tool's ops do.

Both kernels run with `autotune_effort="none"`: scripts/peers.py sets their config from a
short list built around Helion's own default config (helion_configs there), so no
autotuning search runs during a benchmark call.
"""

import torch

import helion
import helion.language as hl


@helion.kernel(autotune_effort="none")
def rms_norm_fwd(x: torch.Tensor, w: torch.Tensor, eps: float) -> tuple[torch.Tensor, torch.Tensor]:
    m, n = x.size()
    y = torch.empty_like(x)
    rrms = torch.empty([m], dtype=torch.float32, device=x.device)
    for tile_m in hl.tile(m):
        xt = x[tile_m, :].to(torch.float32)
        rr = torch.rsqrt(torch.mean(xt * xt, dim=-1) + eps)
        y[tile_m, :] = (xt * rr[:, None] * w[:].to(torch.float32)).to(y.dtype)
        rrms[tile_m] = rr
    return y, rrms


@helion.kernel(autotune_effort="none")
def rms_norm_bwd(dy: torch.Tensor, x: torch.Tensor, w: torch.Tensor,
                 rrms: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    m_block = hl.register_block_size(x.size(0))
    n = hl.specialize(w.size(0))
    dx = torch.empty_like(x)
    dw_part = x.new_empty([helion.cdiv(x.size(0), m_block), n], dtype=torch.float32)
    for block in hl.tile(x.size(0), block_size=m_block):
        dw_acc = w.new_zeros([n], dtype=torch.float32)
        for tile_m in hl.tile(block.begin, block.end):
            xt = x[tile_m, :].to(torch.float32)
            dyt = dy[tile_m, :].to(torch.float32)
            rr = rrms[tile_m].to(torch.float32)
            dw_acc += (dyt * xt * rr[:, None]).sum(0)
            g = dyt * w[None, :].to(torch.float32)
            corr = rr * rr * rr * (g * xt).mean(-1)
            dx[tile_m, :] = (rr[:, None] * g - xt * corr[:, None]).to(dx.dtype)
        dw_part[block.id, :] = dw_acc
    return dx, dw_part.sum(0).to(w.dtype)
