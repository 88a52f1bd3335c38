"""The seed example in bf16: RMSNorm followed by SiLU(h) * up, 8 x 4096, bf16 in and out."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def rmsnorm_silu_mul(x, w, up):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(h) * up


model = rmsnorm_silu_mul
example_inputs = (torch.randn(8, 4096, dtype=torch.bfloat16), torch.randn(4096, dtype=torch.bfloat16),
                  torch.randn(8, 4096, dtype=torch.bfloat16))
