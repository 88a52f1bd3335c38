"""Poolings of an input 15x17 (odd sizes: windows that run off the edge differently per side): max
pools with padding, without (2x2), with dilation and ceil_mode, 1-D, ceil_mode without padding (the
high side padded alone); average pools with padding
counted and not counted. Every one is a kernel that reads its window (--fusec-pooling-to-generic)."""
import torch

torch.manual_seed(0)


def pools(x):
    f = torch.nn.functional
    return (f.max_pool2d(x, 3, 2, 1), f.max_pool2d(x, 2), f.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True),
            f.avg_pool2d(x, 3, 2, 1), f.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
            f.max_pool1d(x.flatten(2), 3, 2), f.max_pool2d(-x.abs(), 3, 2, 1),
            f.max_pool2d(x, 3, 2, ceil_mode=True))  # no padding, but the last window runs off the high side


model = pools
example_inputs = (torch.randn(2, 8, 15, 17),)
