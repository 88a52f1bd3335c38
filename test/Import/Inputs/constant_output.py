"""A model that returns a constant tensor of several values (line 8): the host would have to copy
it out of a global. Constants the kernels read compile (fusec-sink-constant-globals)."""

import torch


def model(x):
    return x * 2, torch.tensor([1.0, 2.0, 3.0])


example_inputs = (torch.randn(8, 4),)
