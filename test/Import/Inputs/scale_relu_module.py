"""An nn.Module with a bf16 parameter, 4 x 64 bf16: the parameter becomes an input; bf16 is computed in fp32."""

import torch


class ScaleShift(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = torch.nn.Parameter(torch.ones(64, dtype=torch.bfloat16))

    def forward(self, x):
        return torch.relu(x * self.scale)


model = ScaleShift()
example_inputs = (torch.randn(4, 64, dtype=torch.bfloat16),)
