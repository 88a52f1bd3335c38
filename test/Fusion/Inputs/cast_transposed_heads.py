"""The prologue of PyTorch's math attention on 16-bit q and k (BERT through SDPA on the GPU): each
head-split tensor is transposed, cast to fp32 and scaled; k is transposed once more. The cast runs at
the input's layout and the scale reads it through a permutation (a transpose folded into the
consumer's indexing map, every dim still read): one kernel for q and one for k."""
import torch

B, T, H, D = 2, 16, 4, 16


def scaled_heads(q, k):
    q = q.transpose(1, 2).float() * D ** -0.25
    k = k.transpose(1, 2).float().transpose(-1, -2) * D ** -0.25
    return q.contiguous(), k.contiguous()


model = scaled_heads
example_inputs = (torch.randn(B, T, H, D).bfloat16(), torch.randn(B, T, H, D).bfloat16())
