"""`model` raises its own error when traced (line 7): fusec shows that message and line."""

import torch


def checks_shape(x):
    raise ValueError(f"expected 3 dimensions, got {x.dim()}")


model = checks_shape
example_inputs = (torch.randn(4, 64),)
