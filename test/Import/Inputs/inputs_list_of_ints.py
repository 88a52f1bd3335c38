"""`example_inputs` (line 6) is a list of ints (shapes, perhaps), not tensors."""

import torch

model = torch.nn.ReLU()
example_inputs = [4, 64]
