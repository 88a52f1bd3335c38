"""Found by `fusec fuzz --target cuda` on the H200 (seed 201, 2026-12-02), as generated: a mismatch
on both targets (cuda 2.2e-3, cpu 2.7e-3 against a tolerance of 1.5e-3) that was the oracle's. The
sum of a LayerNorm's own output over its 4096 values is 0 up to 4096 / spread times the rounding
of its mean: a mean off by half an fp32 ulp, as correctly rounded as fp32 allows, moves the sum by
~8e-4, while eager fp32 happened to land 2.3e-5 from fp64. The oracle now also measures the model's
sensitivity to a half-ulp error in every op's result, composite ops decomposed (oracle._perturbed):
7.7e-4 here."""
# fuzz-oracle: narrowest=float32 longest-reduction=4096

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = x0 - 0.5
    v1 = v0 * x0
    v2 = torch.rsqrt((v1.pow(2) + 1.0))
    v3 = torch.nn.functional.layer_norm(v2, (64, 64), None, None, eps=1e-5)
    v4 = v3.sum(dim=(0, 1), keepdim=True)
    v5 = torch.exp(torch.clamp(v4, max=10.0))
    v6 = torch.exp(torch.clamp(v5, max=10.0))
    return v6


model = fuzz_model
example_inputs = (torch.randn(64, 64),)
