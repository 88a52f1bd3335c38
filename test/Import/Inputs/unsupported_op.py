"""A model using an op fusec has no GPU lowering for (torch.sort, line 9): the error names the
ATen op and the model's line."""

import torch


def sort_rows(x):
    y = torch.relu(x)
    return torch.sort(y, dim=-1).values


model = sort_rows
example_inputs = (torch.randn(4, 64),)
