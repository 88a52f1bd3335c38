"""Integer and comparison arithmetic in one kernel: abs of ints, bitwise and/or/xor/not, floor_divide
and remainder (negative operands either side, the most negative int64 by -1, quotients past 2^24 and
2^53), comparisons, where, int <-> float casts, cos/sin, and log of ints cast to float. Divisors are
never 0 in the example inputs (eager raises ZeroDivisionError; `fusec run` skips such random inputs)."""

import torch


def model(i, j, x):
    bits = (torch.abs(i) & 0xFF) | (i ^ j) | (~j & 3)
    floor = torch.floor_divide(i, j) + torch.remainder(i, j) * 1000 + i // 7 + torch.remainder(i, -5)
    picked = torch.where(i > j, torch.cos(x), torch.sin(x)) + (i <= j).float() + (i == j).to(torch.float32)
    logs = torch.log(torch.abs(i).float() + 1) + (x * 100).to(torch.int32).to(torch.float32)
    return bits, floor, picked + logs


_EDGES = [7, -7, 7, -7, -2**63, 5, 2**40 + 1, -(2**40) - 1, 2**53 + 3, -(2**24) - 1, 0, 1]
_DIVISORS = [2, 2, -2, -2, -1, 3, 3, -3, 7, 5, -4, 1]
example_inputs = (torch.tensor(_EDGES * 8).view(8, 12), torch.tensor(_DIVISORS * 8).view(8, 12),
                  torch.randn(8, 12))
