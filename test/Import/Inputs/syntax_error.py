"""A model file with a syntax error on line 7 (a missing closing bracket): fusec must point at it."""

import torch


def broken(x):
    return torch.relu(x * 2
