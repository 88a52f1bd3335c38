"""A linear layer's bias gradient: the output gradient [B, T, C] summed over B and T. 16 x 4096 x 1024
fp32 (16 sequences of 4096 tokens)."""

import torch


def bias_grad(g):
    return g.sum(dim=(0, 1))


model = bias_grad
example_inputs = (torch.randn(16, 4096, 1024),)
