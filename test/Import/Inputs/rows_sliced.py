# A slice of the dynamic rows (all but the last): its row count is rows - 1, clamped, which the host
# would have to compute. Neither target's host computes sizes other than the rows themselves; fusec
# names the slice. (min=3: with min=2 torch.export itself refuses, rows - 1 could be 1.)
import torch


def model(x):
    return x[:-1] * 2.0


example_inputs = (torch.randn(8, 32),)
dynamic_shapes = ({0: torch.export.Dim("rows", min=3)},)
