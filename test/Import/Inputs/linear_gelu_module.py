"""An fp32 nn.Module with an nn.Linear: gelu(linear(x))."""

import torch

torch.manual_seed(0)


class LinearGelu(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(64, 32)

    def forward(self, x):
        return torch.nn.functional.gelu(self.proj(x))


model = LinearGelu()
example_inputs = (torch.randn(8, 64),)
