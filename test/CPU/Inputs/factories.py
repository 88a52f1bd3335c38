"""Constants and iotas inside the kernels, none of them a host global: full, full_like, zeros_like,
ones_like, new_ones, scalar_tensor (splat constants, read as their value); arange with a start, a
step and a float step, an arange of a row index minus a column index; and constant tensors of
several values (normalization constants, a table), which the kernels read from their own module."""

import torch

_MEAN = torch.tensor([0.485, 0.456, 0.406]).view(1, 3, 1, 1)
_TABLE = torch.linspace(-1, 1, 96).reshape(3, 32) ** 3


def model(x, mask):
    d = x.device  # the factories are made where the input is (CPU or the GPU), as models do
    constants = (torch.full((2, 3, 16, 32), 3.0, device=d) * x + torch.full_like(x, -0.5) + torch.zeros_like(x)
                 + torch.ones_like(x) * x.new_ones(2, 3, 16, 32) + torch.scalar_tensor(1.5, device=d) * x)
    iotas = (torch.arange(3, 99, 3, device=d)[None, :] - torch.arange(16, device=d)[:, None] * 2).float() \
        + torch.arange(0.0, 1.6, 0.05, device=d)[None, :]
    masked = torch.where(mask, torch.full_like(x, float("-inf")), x).softmax(-1)
    tables = (x - _MEAN.to(d)) * _TABLE.to(d)[:, None, :]
    return constants + iotas, masked, tables


example_inputs = (torch.randn(2, 3, 16, 32), torch.rand(2, 3, 16, 32) < 0.3)
