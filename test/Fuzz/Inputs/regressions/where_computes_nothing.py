"""Found by `fusec fuzz --target cuda` on the H200 (shrunk by hypothesis): a torch.where whose
result is one of its inputs unchanged leaves no kernel; the cuda target then stops with "expected
exactly one gpu.module at the nvvm stage, found 0". Fixed: such a program gets a PTX module with no
kernels, and the runtime returns a copy of the input (outputs never alias inputs)."""
# fuzz-oracle: narrowest=float32 longest-reduction=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = torch.where(x0 > 0.0, x0, x0)
    return v0


model = fuzz_model
example_inputs = (torch.randn(1),)
