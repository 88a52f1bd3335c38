# GELU(tanh) + bias over a dynamic number of tokens (dynamic_shapes keyed by argument name): a flat
# kernel whose element count is a size the runtime computes.
import torch


def model(x, b):
    return torch.nn.functional.gelu(x + b, approximate="tanh")


tokens = torch.export.Dim("tokens", min=1, max=1 << 20)
example_inputs = (torch.randn(8, 5120), torch.randn(5120))
dynamic_shapes = {"x": {0: tokens}, "b": None}
