"""Found by `fusec fuzz` (shrunk by hypothesis, then by hand): a reduction over a dimension that a
keepdim reduction has just made size 1. Fails at the fused stage on every target:

  error: stage 'fused' failed: ...: error: 'linalg.generic' op invalid indexing maps are
  non-invertible: ((d0, d1) -> (d0, d0))

(on a 1-d input, `((d0) -> ())`). The same with .sum(-1) or log_softmax in place of softmax."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def reduce_after_keepdim(x):
    m = torch.amax(x, dim=-1, keepdim=True)
    return torch.softmax(m, dim=-1)


model = reduce_after_keepdim
example_inputs = (torch.randn(4, 8),)
