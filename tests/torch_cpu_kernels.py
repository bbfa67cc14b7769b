"""CPU kernels for the PyTorch ops that have only CUDA kernels, so the suite can
compare yamlgrad's entries for them with torch.

PyTorch's fused recurrent cells (`_thnn_fused_lstm_cell`, `_thnn_fused_gru_cell`)
and their first-order backwards run on CUDA only; their autograd formulas (the
`ThnnFusedLstmCellBackward0` nodes, and the `_thnn_differentiable_*_backward`
composites a double backward runs) are registered for every device. This module
registers CPU kernels for the four ops, written with torch's own ops after
PyTorch's CUDA kernels, so a CPU call reaches PyTorch's real autograd: its node
names, its saved values and its differentiable backward. `install(torch)` is
idempotent; the suite calls it before calling torch (support.call_torch).
"""

from __future__ import annotations

from types import ModuleType
from typing import Any

_LIBRARY: list[Any] = []  # the torch.library handle, kept alive once installed


def _torch() -> ModuleType:
    import torch

    return torch


def _lstm_cell(ig: Any, hg: Any, cx: Any, ib: Any = None, hb: Any = None) -> Any:
    gates = ig + hg
    if ib is not None:
        gates = gates + ib + hb
    i, f, g, o = gates.chunk(4, 1)
    i, f, g, o = i.sigmoid(), f.sigmoid(), g.tanh(), o.sigmoid()
    cy = f * cx + i * g
    hy = o * cy.tanh()
    return hy, cy, _torch().cat([i, f, g, o], 1)


def _lstm_cell_backward_impl(
    grad_hy: Any, grad_cy: Any, cx: Any, cy: Any, workspace: Any, has_bias: bool
) -> Any:
    i, f, g, o = workspace.chunk(4, 1)
    tanh_cy = cy.tanh()
    go = grad_hy if grad_hy is not None else cx.new_zeros(cx.shape)
    gcx = go * o * (1 - tanh_cy * tanh_cy)
    if grad_cy is not None:
        gcx = gcx + grad_cy
    gig = gcx * g * (1 - i) * i
    gfg = gcx * cx * (1 - f) * f
    gcg = gcx * i * (1 - g * g)
    gog = go * tanh_cy * (1 - o) * o
    grad_gates = _torch().cat([gig, gfg, gcg, gog], 1)
    grad_bias = grad_gates.sum(0) if has_bias else None
    return grad_gates, gcx * f, grad_bias


def _gru_cell(ig: Any, hg: Any, hx: Any, ib: Any = None, hb: Any = None) -> Any:
    torch = _torch()
    if ib is not None:
        ig, hg = ig + ib, hg + hb
    ir, ii, in_ = ig.chunk(3, 1)
    hr, hi, hn = hg.chunk(3, 1)
    r = (ir + hr).sigmoid()
    z = (ii + hi).sigmoid()
    n = (in_ + r * hn).tanh()
    hy = n + z * (hx - n)
    return hy, torch.cat([r, z, n, hx, hn], 1)


def _gru_cell_backward(grad_hy: Any, workspace: Any, has_bias: bool) -> Any:
    torch = _torch()
    r, z, n, hx, hn = workspace.chunk(5, 1)
    gig = grad_hy * (hx - n) * (1 - z) * z
    ghx = grad_hy * z
    gin = grad_hy * (1 - z) * (1 - n * n)
    ghn = gin * r
    grg = gin * hn * (1 - r) * r
    grad_input = torch.cat([grg, gig, gin], 1)
    grad_hidden = torch.cat([grg, gig, ghn], 1)
    if has_bias:
        return grad_input, grad_hidden, ghx, grad_input.sum(0), grad_hidden.sum(0)
    return grad_input, grad_hidden, ghx, None, None


def install(torch: ModuleType) -> None:
    """Register the CPU kernels (once per process)."""
    if _LIBRARY:
        return
    library = torch.library.Library("aten", "IMPL")
    library.impl("_thnn_fused_lstm_cell", _lstm_cell, "CPU")
    library.impl("_thnn_fused_lstm_cell_backward_impl", _lstm_cell_backward_impl, "CPU")
    library.impl("_thnn_fused_gru_cell", _gru_cell, "CPU")
    library.impl("_thnn_fused_gru_cell_backward", _gru_cell_backward, "CPU")
    _LIBRARY.append(library)
