# fusec fuzz rejection (target cpu, seed 0): no-rows
#   no input of rank 2 or more with 2 rows or more to vary
# reproduce: fusec fuzz --replay fuzz-failures/rejected/seed0-1.py --target cpu --dynamic-rows
"""fusec fuzz model: sub, scalar on float32[0, 257]."""
# fuzz-oracle: narrowest=float32 longest-reduction=1 specials=1

import torch

torch.manual_seed(0)  # the same example inputs on every run


def fuzz_model(x0):
    v0 = x0 - -1.0
    v1 = x0 + 1.0
    return v1


model = fuzz_model
example_inputs = (torch.randn(0, 257),)
