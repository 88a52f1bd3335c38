"""The seed model (RMSNorm then SiLU(h) * up) at a small shape, 4 x 64 fp32, for IR checks."""

import torch


def rmsnorm_silu_mul(x, w, up):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(h) * up


model = rmsnorm_silu_mul
example_inputs = (torch.randn(4, 64), torch.randn(64), torch.randn(4, 64))
