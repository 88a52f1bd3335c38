"""`example_inputs` (line 6) is an int, not a tuple of tensors."""

import torch

model = torch.nn.ReLU()
example_inputs = 4
