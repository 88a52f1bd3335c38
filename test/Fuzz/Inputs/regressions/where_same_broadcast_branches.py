"""Found by `fusec fuzz` (shrunk by hand): torch.where whose two branches are one broadcast tensor,
then reduced. Fails while lowering to linalg (torch-mlir's pipeline), on every target:

  error: stage 'linalg' failed: ...: error: 'tensor.cast' op operand type 'tensor<f32>' and result
  type 'tensor<5xf32>' are cast incompatible

Without the sum, torch-mlir's import fails instead (a rejection). Probably torch-mlir's bug; fusec
reports it as a failed stage, not as an unsupported op."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def where_then_sum(x, y):
    return torch.where(x > 0.0, y, y).sum(dim=-1)


model = where_then_sum
example_inputs = (torch.randn(5, 5), torch.randn(5))
