"""Found by `fusec fuzz` (shrunk by hypothesis, then by hand): LayerNorm of a LayerNorm over size-1
dimensions. torch-mlir's LayerNorm computes the variance in f64, and one fusion group ends up with
an f32 result type for an f64 value; fails at the fused stage on every target:

  error: stage 'fused' failed: ...: error: expected 'tensor<1x1xf32>' but got 'tensor<1x1xf64>'

Possibly the same fault as multi_output_shapes.py. (Every fusec LayerNorm, examples/layernorm.py
too, computes its variance in f64 at the linalg stage: slow on most GPUs.)"""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def layer_norm_twice(x):
    h = torch.nn.functional.layer_norm(x, (1,))
    return torch.nn.functional.layer_norm(h, (1, 1))


model = layer_norm_twice
example_inputs = (torch.randn(1, 1),)
