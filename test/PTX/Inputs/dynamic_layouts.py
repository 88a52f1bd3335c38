"""Layout ops over a dynamic row count, in one model: rotary embeddings (slices, neg, cat), chunked
SwiGLU, a softmax of a slice (a copy into the reduction's kernel) and a flip of the rows themselves
(row `rows - 1 - i`, a size computed on the host)."""

import torch


def rotate_half(x):
    return torch.cat((-x[..., 32:], x[..., :32]), dim=-1)


def model(q, cos, sin, gate_up, logits):
    gate, up = gate_up.chunk(2, dim=-1)
    return (q * cos + rotate_half(q) * sin, torch.nn.functional.silu(gate) * up,
            torch.softmax(logits[:, 16:], dim=-1), logits.flip(0) * 3)


rows = torch.export.Dim("rows", min=2, max=1 << 20)
example_inputs = (torch.randn(8, 4, 16, 64), torch.randn(16, 64), torch.randn(16, 64), torch.randn(8, 1024),
                  torch.randn(8, 272))
dynamic_shapes = ({0: rows}, None, None, {0: rows}, {0: rows})
