"""A model file that raises while it is executed (line 6): fusec must report the line and the message."""

import torch

weights = torch.randn(4, 64)
scale = weights.view(3, 5)
model = torch.nn.ReLU()
example_inputs = (torch.randn(4, 64),)
