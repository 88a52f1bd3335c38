"""`model` (line 5) is a number, not an nn.Module or a function."""

import torch

model = 3
example_inputs = (torch.randn(4, 64),)
