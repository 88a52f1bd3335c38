"""GPT-2's attention prologue: the packed qkv split, each into heads (view, transpose), q and k scaled."""
import torch

B, T, H, D = 2, 16, 4, 16


def split_heads(qkv):
    q, k, v = qkv.split(H * D, dim=-1)
    heads = [z.view(B, T, H, D).transpose(1, 2) for z in (q, k, v)]
    scale = D ** -0.25
    return heads[0] * scale, heads[1] * scale, heads[2] + 0


model = split_heads
example_inputs = (torch.randn(B, T, 3 * H * D),)
