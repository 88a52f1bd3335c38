"""A graph that returns constants beside a computed output: T5's position bias of zeros when a layer
has none, a mask before it is used. Each returned constant is written by a kernel."""

import torch


class ReturnsConstants(torch.nn.Module):
    def forward(self, x):
        return x * 2, torch.zeros(4, 8), torch.tensor([[1.0, 2.0], [3.0, 4.0]]), torch.full((2, 3), 7)


model = ReturnsConstants()
example_inputs = (torch.randn(4, 8),)
