"""`example_inputs` (line 6) holds a sparse tensor; fusec compiles dense tensors only."""

import torch

model = torch.nn.ReLU()
example_inputs = (torch.eye(4).to_sparse(),)
