"""x + bias, with the bias broadcast along rows, 8 x 4096 fp32."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def bias_add(x, bias):
    return x + bias


model = bias_add
example_inputs = (torch.randn(8, 4096), torch.randn(4096))
