"""A model file that defines `example_inputs` but forgets `model`."""

import torch

example_inputs = (torch.randn(4, 64),)
