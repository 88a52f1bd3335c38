# The rows moved past dim 0 by a transpose (GPT-2's split into heads, with the tokens as rows): the
# inputs' dynamic dim is dim 0, but the transpose's result has it at dim 1. fusec names that op.
import torch


def model(qkv):
    q = qkv[:, :64].view(qkv.shape[0], 4, 16)
    return q.transpose(0, 1) * 0.25


example_inputs = (torch.randn(8, 192),)
dynamic_shapes = ({0: torch.export.Dim("rows", min=2)},)
