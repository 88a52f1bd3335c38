"""Found by `fusec fuzz` (shrunk by hypothesis, then by hand): a 0-d result (a full sum) added to a
1-element tensor. The cuda target leaves a store on the host:

  error: host op 'memref.store' cannot be expressed in the launch manifest

The cpu target compiles and runs it correctly; with x.sum(-1, keepdim=True) both pass."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def sum_plus(x, y):
    return x.sum() + y


model = sum_plus
example_inputs = (torch.randn(5), torch.randn(1))
