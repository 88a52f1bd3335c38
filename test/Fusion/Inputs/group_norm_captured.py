"""A function (not a module) that calls a GroupNorm it captures: torch.export makes the weight and
bias constants of the graph, which the decomposition views as [1, G, C/G, 1]. A reshape of a constant
was a host op over a global only kernels read ('memref.get_global' refused); --fusec-fold-layout-ops
now reads the constant through the view's index map."""
import torch

torch.manual_seed(0)
norm = torch.nn.GroupNorm(2, 10)
with torch.no_grad():
    norm.weight.normal_()
    norm.bias.normal_()


def group_norm_relu(x):
    return torch.relu(norm(x))


model = group_norm_relu
example_inputs = (torch.randn(2, 10, 2, 3),)
