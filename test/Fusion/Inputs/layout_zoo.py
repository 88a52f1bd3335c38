"""Every layout op fusec reads through an index map, each with a little arithmetic: transpose,
permute + t, flip, roll, select, stack, narrow, unbind, expand, a strided slice, split_with_sizes."""
import torch


def layout_zoo(x, y):
    a = x.transpose(0, 1) * 2
    b = x.permute(1, 0).t() + 1
    c = x.flip(-1) * 3
    d = x.roll(3, -1) * 4
    e = x[:, 2] * 5
    f = torch.stack((x, y), dim=1) * 6
    g = x.narrow(1, 4, 8) * 7
    h, i = x.unbind(0)[:2]
    k = y[None].expand(3, 16, 32) * 8
    m = x[:, 1:30:2] * 9
    p, q = x.split([24, 8], dim=1)
    return a, b, c, d, e, f, g, h * i, k, m, torch.cat((q, p), dim=1) - 1


model = layout_zoo
example_inputs = (torch.randn(16, 32), torch.randn(16, 32))
