"""Found by `fusec fuzz --target cuda` on the H200 (shrunk by hypothesis): `v1 - v1` of a LayerNorm
came out 5.2e-08, not 0, while the GPU kernels were built with FMA contraction (fastmath<contract>,
as nvcc's default): LLVM turned `a*b - a*b` into `fma(a, b, -(a*b))`, the rounding error of a*b.
Fixed by not contracting (eager gives exactly 0)."""
# fuzz-oracle: narrowest=float32 longest-reduction=7

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = -x0
    v1 = torch.nn.functional.layer_norm(v0, (7,), None, None, eps=1e-5)
    v2 = v1 - v1
    return v2


model = fuzz_model
example_inputs = (torch.randn(7),)
