"""Scans of every kind the GPU kernels build, in one model: a long fp32 row with a prologue and an
epilogue (a block per row, 32-bit shuffles), an int64 running count (64-bit values shuffled as two
words), float64 rows of a dynamic count, and a bf16 scan along a middle dim (a thread per row)."""

import torch


def model(x, mask, wide, seq):
    return (torch.cumsum(x * 2.0, -1) + 1.0, (mask.long().cumsum(-1) - 1).masked_fill(mask == 0, 1),
            wide.cumsum(-1), seq.cumsum(1) * 0.5)


rows = torch.export.Dim("rows", min=2, max=1 << 20)
example_inputs = (torch.randn(64, 5000), torch.rand(64, 1000) > 0.3, torch.randn(64, 3000).double(),
                  torch.randn(64, 300, 96).bfloat16())
dynamic_shapes = ({0: rows}, {0: rows}, {0: rows}, {0: rows})
