"""`torch.arange(1000) * x`: the iota is computed inside the kernel that reads it (one kernel; it was
an opaque one-thread-per-block kernel of its own writing the iota for the second to read back)."""

import torch


def model(x):
    return torch.arange(1000, device=x.device) * x


example_inputs = (torch.randn(8, 1000),)
