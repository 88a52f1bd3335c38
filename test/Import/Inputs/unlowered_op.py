"""torch.fft.fft has no linalg lowering in torch-mlir: the error names it, not a constant."""

import torch


def f(x):
    y = x * 2
    return torch.fft.fft(y).real


model = f
example_inputs = (torch.randn(8, 64),)
