"""The handbook's seed example: RMSNorm followed by SiLU(h) * up (half of SwiGLU), 8 x 4096 fp32."""

import torch


def rmsnorm_silu_mul(x, w, up):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(h) * up


model = rmsnorm_silu_mul
example_inputs = (torch.randn(8, 4096), torch.randn(4096), torch.randn(8, 4096))
