"""Found by `fusec fuzz --target cuda` on the H200 (shrunk by hypothesis): a LayerNorm over a dim of
size 1 (x - mean is exactly 0, so the output is the bias) was 1.3e-05 off at max|ref| 0.8 with FMA
contraction on: the rounding error of x - mean, times rsqrt(eps) = 316. Fixed by not contracting."""
# fuzz-oracle: narrowest=float32 longest-reduction=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1, x2):
    v0 = x0 * 0.5
    v1 = v0 + x0
    v2 = torch.tanh(v1)
    v3 = v2 * -1.5
    v4 = torch.softmax(v3, dim=-1)
    v5 = torch.rsqrt(torch.exp(v4))
    v6 = -v3
    v7 = torch.nn.functional.layer_norm(v6, (1,), x1, x2, eps=1e-5)
    return v7


model = fuzz_model
example_inputs = (torch.randn(257, 1), torch.randn(1), torch.randn(1))
