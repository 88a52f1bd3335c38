"""A rotation whose angles are computed in the kernel: cos and sin of position x frequency over
[seq, dim], the same for every batch element and head of x [batch, heads, seq, dim]."""
import torch


def rotary_angles(x, y, inv_freq):
    angle = torch.arange(x.shape[2], device=x.device, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return x * angle.cos() + y * angle.sin()


model = rotary_angles
example_inputs = (torch.randn(8, 32, 512, 64), torch.randn(8, 32, 512, 64), torch.rand(64))
