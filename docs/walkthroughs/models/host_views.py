"""Walkthrough 14: the code torch.compile(backend="fusec") runs between its kernels.

    python docs/walkthroughs/models/host_views.py

A GPT-2-like attention block (a fused qkv projection split into heads, attention, the heads merged
back, an output projection) compiled on the CPU twice: with the ops left to PyTorch called as ATen
ops (`fast_views=False, fast_calls=False`), and as the backend calls them by default (views as
aliases of their traced layout, matmuls and attention through their Python bindings). Prints what
the graph's generated code calls in each case, and the lines of the default one from the attention
on.
"""

import collections

import torch
import torch.nn.functional as F
from torch import nn

import fusec.torch_backend as backend


class Attention(nn.Module):
    def __init__(self, d=64, heads=4):
        super().__init__()
        self.heads, self.qkv, self.proj = heads, nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=2)
        q, k, v = (y.view(b, t, self.heads, d // self.heads).transpose(1, 2) for y in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        y = y.transpose(1, 2).contiguous().view(b, t, d)
        return F.gelu(self.proj(y)) + x


graphs = []
partition_and_compile = backend._partition_and_compile


def keep_graph(*args, **kwargs):
    fn, report = partition_and_compile(*args, **kwargs)
    graphs.append(fn.__self__)  # the partitioned graph module whose forward runs
    return fn, report


def calls(gm) -> collections.Counter:
    kinds = collections.Counter()
    for node in gm.graph.nodes:
        if node.op != "call_function":
            continue
        name = getattr(node.target, "__name__", str(node.target))
        if name.startswith("fast_"):
            kinds["fast view (an alias)"] += 1
        elif isinstance(node.target, torch._ops.OpOverload):
            kinds[f"ATen {node.target.overloadpacket.__name__}"] += 1
        elif getattr(torch._C._VariableFunctions, name, None) is node.target:
            kinds[f"torch.{name}"] += 1
        elif name != "getitem":
            kinds["fusec region"] += 1
    return kinds


backend._partition_and_compile = keep_graph
torch.manual_seed(0)
model, x = Attention().eval(), torch.randn(2, 16, 64)
with torch.no_grad():
    for options in ({"fast_views": False, "fast_calls": False}, {}):
        torch._dynamo.reset()
        out = torch.compile(model, backend="fusec", options=options)(x)
        assert torch.allclose(out, model(x), atol=1e-5)
        print(f"options={options}:", ", ".join(f"{kind} {n}" for kind, n in sorted(calls(graphs[-1]).items())))

code = graphs[-1].code.splitlines()
start = next(i for i, line in enumerate(code) if "_scaled_dot_product" in line)
for line in code[start:start + 4]:
    print(line.strip().split(";")[0])
