"""GPT-2's attention prologue in bf16: the packed qkv is cast to fp32 once (one extf over the whole
[B, T, 3C]), and q, k and v read that cast through their index maps."""
import torch

B, T, H, D = 2, 16, 4, 16


def split_heads(qkv):
    q, k, v = qkv.split(H * D, dim=-1)
    heads = [z.view(B, T, H, D).transpose(1, 2) for z in (q, k, v)]
    scale = D ** -0.25
    return heads[0] * scale, heads[1] * scale, heads[2] + 0


model = split_heads
example_inputs = (torch.randn(B, T, 3 * H * D).bfloat16(),)
