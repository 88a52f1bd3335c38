# Region outputs that were copied after their kernel wrote them, and are not any more:
#  - an output traced in a permuted layout (Llama's q after rotary embeddings: eager's ops keep the
#    layout of q's transposed view) is written by the kernel in that memory order and viewed back
#    (layout.py's written_in_order); it was written contiguous, then copied into the traced layout;
#  - a piece of a split that only PyTorch reads (GPT-2's q, a third of the fused qkv projection) is a
#    view made outside the region (partition.py); it was a region output, written by the kernel,
#    then copied again into its traced strides.
# Each case: eager's values and strides, and no aten::copy_ in the compiled call beyond eager's own
# (PyTorch's matmul of a strided operand copies it, in both).

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch
from torch.profiler import ProfilerActivity, profile


def copies(fn, *args):
    """(fn's result, the aten::copy_ calls it made)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        result = fn(*args)
    return result, sum(e.count for e in prof.key_averages() if e.key == "aten::copy_")


def check(fn, *args):
    compiled = torch.compile(fn, backend="fusec")
    with torch.no_grad():
        want, eager_copies = copies(fn, *args)
        compiled(*args)
        got, compiled_copies = copies(compiled, *args)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    print("matches eager:", all(close(g, w) for g, w in zip(got, want)),
          "| strides as eager's:", [g.stride() == w.stride() for g, w in zip(got, want)],
          "| copies beyond eager's:", max(compiled_copies - eager_copies, 0))
    print("\n".join(tb.reports[-1].lines()[:2]))


# CHECK-LABEL: TEST: permuted_output
# CHECK-NEXT:  matches eager: True | strides as eager's: [True, True] | copies beyond eager's: 0
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (2 kernels, cpu)
@run
def permuted_output():
    def rope(x, cos, sin):
        q = x.transpose(1, 2)  # [batch, heads, seq, dim] over [batch, seq, heads, dim]
        rotated = torch.cat([-q[..., 8:], q[..., :8]], -1)
        return q * cos + rotated * sin, q.sum(-1)

    check(rope, torch.randn(2, 32, 4, 16), torch.randn(32, 16), torch.randn(32, 16))


# The region reads the packed qkv itself (its pieces' views are index maps), and q is a view outside.
# CHECK-LABEL: TEST: split_piece_outside
# CHECK-NEXT:  matches eager: True | strides as eager's: [True, True, True] | copies beyond eager's: 0
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (2 kernels, cpu)
# CHECK-NEXT:    fusec   fusec_region_0  cpu  split, view, transpose, mul, view, transpose, clone -> main_kernel_0, main_kernel_1
@run
def split_piece_outside():
    def heads(qkv, w):
        q, k, v = qkv.split(64, dim=-1)
        k = k.view(2, 8, 4, 16).transpose(1, 2) * 0.25
        v = v.view(2, 8, 4, 16).transpose(1, 2).contiguous()
        return q @ w, k, v

    check(heads, torch.randn(2, 8, 192), torch.randn(64, 64))
