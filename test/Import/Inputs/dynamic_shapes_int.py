"""`dynamic_shapes` (line 7) is an int, not a dict or tuple as torch.export takes it."""

import torch

model = torch.nn.ReLU()
example_inputs = (torch.randn(4, 64),)
dynamic_shapes = 0
