"""`fusec check` lists every op, not only the first it cannot compile: topk (line 10) and sort
(line 11) are unsupported, the ops around them (relu, mul, add, rsqrt) are supported."""

import torch


def mixed(x, w):
    y = torch.relu(x) * w
    s = torch.rsqrt(y * y + 1.0)
    c = torch.topk(s, 64, dim=-1).values
    t = torch.sort(c, dim=-1).values
    return t + y


model = mixed
example_inputs = (torch.randn(4, 64), torch.randn(64))
