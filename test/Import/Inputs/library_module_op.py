"""A library module as the model (line 5): its ops record no line of this file. An op fusec cannot
compile is named for itself (it used to take the previous op's name, or none) at the `model` line."""

import torch
model = torch.nn.Embedding(32, 8)
example_inputs = (torch.randint(0, 32, (4, 16)),)
