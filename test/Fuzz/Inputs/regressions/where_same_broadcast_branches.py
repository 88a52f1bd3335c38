"""Found by `fusec fuzz` (shrunk by hand): torch.where whose two branches are one broadcast tensor,
then reduced. Fails while lowering to linalg (torch-mlir's pipeline), on every target:

  error: stage 'linalg' failed: ...: error: 'tensor.cast' op operand type 'tensor<f32>' and result
  type 'tensor<5xf32>' are cast incompatible

Without the sum, torch-mlir's import failed instead. torch-mlir folds where(c, y, y) to y and cannot
cast y to the broadcast shape. Fixed: fusec decomposes where(c, y, y) into a broadcast of y before
import (frontend.py)."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def where_then_sum(x, y):
    return torch.where(x > 0.0, y, y).sum(dim=-1)


model = where_then_sum
example_inputs = (torch.randn(5, 5), torch.randn(5))
