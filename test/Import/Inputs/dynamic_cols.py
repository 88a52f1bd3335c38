# Softmax over a dynamic row length: only dim 0 (the row count) may be dynamic, and fusec says so at
# the `dynamic_shapes` line.
import torch


def model(x):
    return torch.softmax(x, -1)


cols = torch.export.Dim("cols", min=2, max=1 << 16)
example_inputs = (torch.randn(8, 4096),)
dynamic_shapes = ({1: cols},)
