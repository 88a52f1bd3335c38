"""`model` (line 5) is the class, not an instance (`torch.nn.ReLU` for `torch.nn.ReLU()`)."""

import torch

model = torch.nn.ReLU
example_inputs = (torch.randn(4, 64),)
