"""torch.cummax has no lowering to torch-mlir's backend contract: the import itself fails there."""

import torch


def f(x):
    y = torch.cummax(x, -1).values
    return y * 2 + x


model = f
example_inputs = (torch.randn(8, 64),)
