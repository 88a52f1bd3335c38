"""`model` takes two tensors but `example_inputs` (line 11) holds one."""

import torch


def add(x, y):
    return x + y


model = add
example_inputs = (torch.randn(4, 64),)
