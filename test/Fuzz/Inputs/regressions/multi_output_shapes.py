"""Found by `fusec fuzz` (shrunk by hypothesis, then by hand): a model that returns a value and a
reduction of it. Both land in one fusion group, whose results then get each other's types; fails at
the fused stage on every target:

  error: stage 'fused' failed: ...: error: expected 'tensor<4x8xf32>' but got 'tensor<4x1xf32>'

(without keepdim: `but got 'tensor<4xf32>'`). IRDL gives all values of one variadic one type. Fixed:
fusec.group lists its results in runs of one type (dialects/fusec_dialect.py)."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def value_and_its_sum(x):
    v = -x
    return v, v.sum(dim=-1, keepdim=True)


model = value_and_its_sum
example_inputs = (torch.randn(4, 8),)
