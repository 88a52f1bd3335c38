"""Rotary embeddings in bf16 at a Llama head size (128): 128-bit vectors are 8 elements."""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(q, cos, sin):
    return q * cos + rotate_half(q) * sin


model = rope
example_inputs = (torch.randn(2, 8, 64, 128, dtype=torch.bfloat16), torch.randn(64, 128, dtype=torch.bfloat16),
                  torch.randn(64, 128, dtype=torch.bfloat16))
