"""A linear layer's bias gradient: the output gradient [B, T, C] summed over B and T. 128 x 512 x 1024 fp32."""

import torch


def bias_grad(g):
    return g.sum(dim=(0, 1))


model = bias_grad
example_inputs = (torch.randn(128, 512, 1024),)
