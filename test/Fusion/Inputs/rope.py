"""Rotary embeddings (Llama's apply_rotary_pos_emb on q): rotate_half is two slices, a neg and a cat."""
import torch


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def rope(q, cos, sin):
    return q * cos + rotate_half(q) * sin


model = rope
example_inputs = (torch.randn(2, 4, 16, 64), torch.randn(16, 64), torch.randn(16, 64))
