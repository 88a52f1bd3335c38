"""ATen ops the backend asks aot_autograd to decompose while it traces, into ops fusec compiles.

Training batch norm (`_native_batch_norm_legit_functional`: the batch's statistics, and the running
statistics updated as new tensors) has no fusec kernel of its own, and left whole it stayed in
PyTorch: a ResNet's training graph kept 6 of its 35 ops there. PyTorch's own decomposition
(torch._decomp) writes it as `var_mean` over (N, H, W), `rsqrt`, the scale and shift, and the
running statistics' `mul`/`add`, all in fusec's op table, so the statistics and the normalization
fuse with the ReLU and residual add beside them. The backward is not touched: decompositions apply
below autograd, so its formula (`native_batch_norm_backward`) runs in PyTorch as before.
"""

from __future__ import annotations

import torch
from torch._decomp import get_decompositions

__all__ = ["DECOMPOSED", "decompositions"]

DECOMPOSED = [torch.ops.aten._native_batch_norm_legit_functional]


def decompositions() -> dict:
    """The table passed to aot_autograd (`decompositions=`)."""
    return get_decompositions(DECOMPOSED)
