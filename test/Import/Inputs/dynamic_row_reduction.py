# A sum over the rows of a model compiled with a dynamic row count: a reduction's length sets its
# kernel's threads and registers, so fusec refuses it, at the line of the reduction.
import torch


def model(x):
    return x.sum(0)


rows = torch.export.Dim("rows")
example_inputs = (torch.randn(8, 4096),)
dynamic_shapes = ({0: rows},)
