# The matmuls and attention left to PyTorch are called through their generated Python bindings
# (fast_calls.py: torch.addmm where the graph called torch.ops.aten.addmm.default), with the same
# results; with fast_calls=False the graph keeps its OpOverloads.

# RUN: %python %s | FileCheck %s
# CHECK: default: OpOverloads of the swapped ops 0, bindings {{[1-9]}}
# CHECK: matches eager: True
# CHECK: fast_calls=False: OpOverloads of the swapped ops {{[1-9]}}, bindings 0
# CHECK: matches eager: True

import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

from fusec.torch_backend.fast_calls import BINDINGS

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from partitioned_graphs import keep_graphs  # noqa: E402

torch.manual_seed(0)


class Block(nn.Module):
    def __init__(self, d=32):
        super().__init__()
        self.qkv, self.out, self.w = nn.Linear(d, 3 * d), nn.Linear(d, d, bias=False), nn.Parameter(torch.randn(4, d, d))

    def forward(self, x):
        q, k, v = self.qkv(x).view(2, 8, 3, 4, 8).permute(2, 0, 3, 1, 4)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(2, 8, 32)
        z = torch.bmm(y.reshape(2, 8, 32).repeat(2, 1, 1), self.w)  # [4, 8, 32]
        return torch.relu(self.out(y)) + z[:2]


graphs = keep_graphs()
model, x = Block().eval(), torch.randn(2, 8, 32)
bindings = set(BINDINGS.values())
with torch.no_grad():
    want = model(x)
    for label, options in (("default", {}), ("fast_calls=False", {"fast_calls": False})):
        torch._dynamo.reset()
        got = torch.compile(model, backend="fusec", options=options)(x)
        targets = [n.target for n in graphs[-1].graph.nodes if n.op == "call_function"]
        print(f"{label}: OpOverloads of the swapped ops {sum(t in BINDINGS for t in targets)}, "
              f"bindings {sum(t in bindings for t in targets)}")
        print("matches eager:", torch.allclose(got, want, atol=1e-5))
