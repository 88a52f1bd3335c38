"""Eval BatchNorm of [64, 256, 56, 56] bf16 as torch 2.11 decomposes it: (x - mean) times
1 / sqrt(var + eps), per channel, then the weight and bias."""

import torch

torch.manual_seed(0)


def batchnorm_eval(x, mean, var, weight, bias):
    inv = torch.reciprocal(torch.sqrt(var + 1e-5))
    return ((x - mean[:, None, None]) * inv[:, None, None]) * weight[:, None, None] + bias[:, None, None]


model = batchnorm_eval
bf16 = dict(dtype=torch.bfloat16)
example_inputs = (torch.randn(64, 256, 56, 56, **bf16), torch.randn(256, **bf16), torch.rand(256, **bf16) + 0.5,
                  torch.randn(256, **bf16), torch.randn(256, **bf16))
