"""Integer abs, as T5's relative position buckets take it of int64 positions (issue 22): an int64
abs and an int32 abs in one kernel."""

import torch


def model(positions, offsets):
    return torch.abs(positions) + torch.abs(offsets).to(torch.int64)


example_inputs = (torch.arange(-64, 64, dtype=torch.int64).view(8, 16),
                  torch.arange(-64, 64, dtype=torch.int32).view(8, 16) * 3)
