"""Found by `fusec fuzz --target cuda` on the H200 (seed 301, 2026-12-02), shrunk: LayerNorm with a
weight of 1e30 magnitudes, then LayerNorm of that. The second one's variance overflows fp32: CUDA
eager and fusec give 0 (rstd = rsqrt(inf) = 0), CPU eager gives the normalised row (max 1.555). The
oracle compared with CPU eager only; a cuda output of a `specials` model now also passes against
eager on the GPU. Before the Chan-merge fix of the same day (codegen/row_variance.merge), fusec
gave NaN here: 8 values over 32 threads, and an empty thread's d^2 * 0 = inf * 0. Replayed on the
GPU only (test/Runtime/fuzz-regressions.test): on the CPU eager itself disagrees with itself, a row
of 1e30-scaled randn normalises to NaN at 8 and 1024 elements and to 0 at 33 (torch 2.13)."""
# fuzz-oracle: narrowest=float32 longest-reduction=8 specials=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1, x2):
    v0 = torch.nn.functional.layer_norm(x0, (8,), x1, x2, eps=1e-5)
    v1 = torch.nn.functional.layer_norm(v0, (8,), None, None, eps=1e-5)
    return v1


model = fuzz_model
example_inputs = (torch.randn(8), torch.randn(8) * 1e30, torch.randn(8))
