# torch.compile(backend="fusec") on the CPU takes layout ops into its regions (support.py's LAYOUT):
# rotary embeddings (slices, neg, cat), SwiGLU over x.chunk(2, -1), and GPT-2's split into heads
# with their scale each become one region of one kernel that matches eager; before, the slices and
# the cat stayed in PyTorch between regions.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch
import torch.nn.functional as F


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def check(fn, *args):
    got = torch.compile(fn, backend="fusec")(*args)
    print("matches eager:", close(got, fn(*args)))
    report = tb.reports[-1]
    for r in report.regions:
        ops = ", ".join(o.removeprefix("aten.") for o in r.ops)
        print(f"{r.name}: {ops} -> {len(r.kernels)} kernel(s) [{r.status}]")
    print("pytorch:", sorted(op for op, _ in report.pytorch_ops))


# CHECK-LABEL: TEST: rope
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec_region_0: mul, slice, slice, neg, cat, mul, add -> 1 kernel(s)
# CHECK-NEXT:  pytorch: []
@run
def rope():
    check(lambda q, cos, sin: q * cos + rotate_half(q) * sin,
          torch.randn(2, 4, 16, 64), torch.randn(16, 64), torch.randn(16, 64))


# CHECK-LABEL: TEST: chunked_swiglu
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec_region_0: split, silu, mul -> 1 kernel(s)
# CHECK-NEXT:  pytorch: []
@run
def chunked_swiglu():
    def fn(x):
        a, b = x.chunk(2, -1)
        return F.silu(a) * b
    check(fn, torch.randn(8, 256))


# CHECK-LABEL: TEST: split_heads_scaled
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec_region_0: split, view, transpose, mul -> 1 kernel(s)
# CHECK-NEXT:  pytorch: []
@run
def split_heads_scaled():
    def fn(qkv):
        q, k, v = qkv.split(64, dim=-1)
        return q.view(2, 16, 4, 16).transpose(1, 2) * 0.25
    check(fn, torch.randn(2, 16, 192))


# Over dynamic rows the chunk along the static last dim is an index map too (it stayed in PyTorch
# until fusec-fold-layout-ops took dynamic rows): one region, one kernel, nothing left in PyTorch.
# CHECK-LABEL: TEST: dynamic_rows
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec_region_0: split, silu, mul -> 1 kernel(s) [compiled]
# CHECK-NEXT:  pytorch: []
@run
def dynamic_rows():
    def fn(x):
        a, b = x.chunk(2, -1)
        return F.silu(a) * b
    x = torch.randn(8, 256)
    torch._dynamo.mark_dynamic(x, 0)
    check(fn, x)
