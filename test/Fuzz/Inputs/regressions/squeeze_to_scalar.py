"""Found by `fusec fuzz --target cuda` on the H200 (seed 35, 2026-12-02) in a larger model (sums, a
where, tanh and rms_norm over float32[16, 16] with a float32[1, 1] input), written here by hand
from the cause: a float32[1, 1] tensor squeezed to a 0-d scalar is a tensor.collapse_shape with no
reassociation groups, and fusec-fold-unit-reshapes built the consumer's indexing map from None
exprs ("internal error in pass fusec-fold-unit-reshapes: Invalid expression (None?) when attempting
to create an AffineMap"), on both targets."""
# fuzz-oracle: narrowest=float32 longest-reduction=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0, x1):
    v0 = torch.tanh(x0 * x1.squeeze())
    return v0


model = fuzz_model
example_inputs = (torch.randn(16, 16), torch.randn(1, 1))
