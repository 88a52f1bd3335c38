"""Found by `fusec fuzz --target cuda` on the H200 (seed 301, 2026-12-02), shrunk: LayerNorm with a
weight of 1e30 magnitudes, then LayerNorm of that. The second one's variance overflows fp32 (the
fp64 reference: the normalised row, max 1.555). Eager gives NaN on the CPU (torch 2.13) and on the
GPU (H200, torch 2.11), fusec 0 (rstd = rsqrt(inf) = 0): fp32 holds no answer, so the oracle does
not judge elements where eager overflows and fp64 does not (a `specials` model's, oracle._overflowed);
it had compared with eager and then fp64. Before the Chan-merge fix of the same day
(codegen/row_variance.merge), fusec gave NaN here: 8 values over 32 threads, and an empty thread's
d^2 * 0 = inf * 0; the oracle's poisoned second call still checks that fusec's answer is its own."""
# fuzz-oracle: narrowest=float32 longest-reduction=8 specials=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1, x2):
    v0 = torch.nn.functional.layer_norm(x0, (8,), x1, x2, eps=1e-5)
    v1 = torch.nn.functional.layer_norm(v0, (8,), None, None, eps=1e-5)
    return v1


model = fuzz_model
example_inputs = (torch.randn(8), torch.randn(8) * 1e30, torch.randn(8))
