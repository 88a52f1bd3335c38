"""`example_inputs` (line 6) is an empty tuple: nothing to compile for."""

import torch

model = torch.nn.ReLU()
example_inputs = ()
