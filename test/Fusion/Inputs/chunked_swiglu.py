"""SwiGLU over one fused projection: x.chunk(2, -1), then silu(a) * b."""
import torch
import torch.nn.functional as F


def swiglu(x):
    a, b = x.chunk(2, -1)
    return F.silu(a) * b


model = swiglu
example_inputs = (torch.randn(8, 512),)
