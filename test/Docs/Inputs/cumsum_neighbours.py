"""A difference of neighbouring running sums (walkthrough chapter 13): `c[:, 1:] - c[:, :-1]` reads
each running value at two elements, its own and the next one's, so it cannot be the scan's epilogue."""

import torch


def model(x):
    c = x.cumsum(-1)
    return c[:, 1:] - c[:, :-1]


example_inputs = (torch.randn(64, 500),)
