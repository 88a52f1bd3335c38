"""nn.Linear + GELU in bf16, a transformer MLP's first half: gelu(x @ w.T + b) with x [512, 1024] and
w [4096, 1024] as nn.Linear keeps its weight (chapter 16: the matmul and its epilogue on the tensor
cores). The weight and bias are inputs, as F.linear takes them."""

import torch

torch.manual_seed(0)


def linear_gelu(x, w, b):
    return torch.nn.functional.gelu(torch.nn.functional.linear(x, w, b))


model = linear_gelu
bf16 = dict(dtype=torch.bfloat16)
example_inputs = (torch.randn(512, 1024, **bf16), torch.randn(4096, 1024, **bf16) / 32, torch.randn(4096, **bf16))
