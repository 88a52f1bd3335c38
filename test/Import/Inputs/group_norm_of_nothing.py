"""group_norm of a [0, 2] input (an OpInfo sample): its decomposition views the empty tensor as
[0, 1, 2, 1], and torch-mlir's lowering of that view divided by the element count, killing the
process with SIGFPE (found by the cuda conformance run, 2026-12-02)."""

import torch
def model(x, w, b):
    return torch.nn.functional.group_norm(x, 1, w, b, eps=1e-5)
example_inputs = (torch.randn(0, 2).bfloat16(), torch.randn(2).bfloat16(), torch.randn(2).bfloat16())
