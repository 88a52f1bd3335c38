"""clamp, maximum and relu: each lowers to a compare and a select that keep a NaN of either operand
(fusec.frontend.decompositions)."""

import torch


def model(x, y):
    return torch.clamp(x, 0.0, 1.0), torch.maximum(x, y), torch.relu(x)


example_inputs = (torch.randn(4, 8), torch.randn(4, 8))
