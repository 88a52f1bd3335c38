# The views PyTorch runs between regions are made as aliases of their traced layout
# (fast_views.py): the graph's code calls no ATen view but those that are graph outputs, the results
# match eager, and a base whose strides are not the traced ones still gets the ATen op's result.

# RUN: %python %s | FileCheck %s
# CHECK: views left as ATen ops: 1 (the output)
# CHECK: fast views: {{[1-9][0-9]+}}
# CHECK: splits left: 0
# CHECK: matches eager: True
# CHECK: transposed base: fallback calls 1, matches: True
# CHECK: traced base: fallback calls 0, matches: True
# CHECK: size-1 dim with another stride: fallback calls 0, matches: True
# CHECK: slice offset: matches: True
# CHECK: chain: 1 fast view, 0 ATen views; traced base matches: True; transposed base matches: True

import operator
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

from fusec.torch_backend import fast_views

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from partitioned_graphs import keep_graphs  # noqa: E402

torch.manual_seed(0)


class Heads(nn.Module):
    """Views of every kind around matmuls: a fused qkv split into heads, a chunk, unbind, select, a
    slice, expand, and a view as an output."""

    def __init__(self, d=32, h=4):
        super().__init__()
        self.h, self.qkv, self.out = h, nn.Linear(d, 3 * d), nn.Linear(d, d)

    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(x).split(d, dim=-1)
        q, k, v = (y.view(b, t, self.h, d // self.h).transpose(1, 2) for y in (q, k, v))
        att = torch.softmax(q @ k.transpose(-1, -2) * 0.5, dim=-1)
        y = (att @ v).transpose(1, 2).reshape(b, t, d)
        a, c = self.out(y).chunk(2, dim=-1)
        first, *_ = torch.unbind(x, dim=1)
        z = F.gelu(a) * c + first.unsqueeze(1)[..., : d // 2].expand(b, t, d // 2)
        return z.view(b * t, d // 2), x.select(1, 0).sum()


graphs = keep_graphs()
model, x = Heads().eval(), torch.randn(2, 8, 32)
with torch.no_grad():
    want = model(x)
    got = torch.compile(model, backend="fusec")(x)
gm = graphs[-1]
views = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in fast_views.FAST_VIEW_OPS]
fast = [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "").startswith("fast_")]
splits = [n for n in gm.graph.nodes if n.op == "call_function" and n.target in fast_views.SPLIT_OPS]
print(f"views left as ATen ops: {len(views)} (the output)")
print(f"fast views: {len(fast)}")
print(f"splits left: {len(splits)}")
print("matches eager:", all(torch.allclose(g, w, atol=1e-5) for g, w in zip(got, want)))

# A fast view made for a base traced contiguous [4, 6]: its transpose.
calls = []


def fallback(base):
    calls.append(1)
    return base.t()


base_val = torch.empty(4, 6)
view = fast_views.fast_view(base_val, base_val.t(), fallback)
other = torch.randn(6, 4).t()  # the same sizes, transposed strides: the trace's layout does not hold
result = view(other)
print(f"transposed base: fallback calls {len(calls)}, matches: {torch.equal(result, other.t()) and result.stride() == other.t().stride()}")
calls.clear()
same = torch.randn(4, 6)
result = view(same)
print(f"traced base: fallback calls {len(calls)}, matches: {torch.equal(result, same.t())}")

# A dim of size 1 addresses nothing: its stride may differ without leaving the fast path.
calls.clear()
base_val = torch.empty(3, 1, 5)
view = fast_views.fast_view(base_val, base_val.permute(2, 0, 1), lambda b: calls.append(1) or b.permute(2, 0, 1))
odd = torch.randn(3, 5).unsqueeze(1).as_strided((3, 1, 5), (5, 7, 1))
result = view(odd)
print(f"size-1 dim with another stride: fallback calls {len(calls)}, matches: {torch.equal(result, odd.permute(2, 0, 1))}")

# A slice's offset is kept relative to its base's own offset (a base that is itself a slice).
base_val = torch.empty(10, 8)
view = fast_views.fast_view(base_val, base_val[2:5, 1:], operator.neg)
storage = torch.randn(20, 8)
print("slice offset: matches:", torch.equal(view(storage[7:17]), storage[7:17][2:5, 1:]))

# A chain of views is one alias of its first base, and falls back to the whole chain.
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402


def chain(x):
    return x.transpose(0, 1).unsqueeze(0)[:, 1:, :].select(2, 2).sin()


gm = make_fx(chain, tracing_mode="fake")(torch.randn(6, 4))
fast_views.make_views_fast(gm)
fast = [n for n in gm.graph.nodes if n.op == "call_function" and getattr(n.target, "__name__", "").startswith("fast_")]
aten_views = [n for n in gm.graph.nodes if n.target in fast_views.FAST_VIEW_OPS]
x, xt = torch.randn(6, 4), torch.randn(4, 6).t()
print(f"chain: {len(fast)} fast view, {len(aten_views)} ATen views; traced base matches: "
      f"{torch.equal(gm(x), chain(x))}; transposed base matches: {torch.equal(gm(xt), chain(xt))}")
