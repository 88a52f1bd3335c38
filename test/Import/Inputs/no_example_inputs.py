"""A model file that defines `model` but forgets `example_inputs`."""

import torch

model = torch.nn.ReLU()
