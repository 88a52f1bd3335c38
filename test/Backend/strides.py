# Region outputs keep the strides the ATen graph was traced with (issue 22): eager's exp of a
# transposed tensor is transposed too, and the ops after the region (as_strided, a view that only
# that layout allows, attention) were traced reading it so. Inputs that are strided views are read
# right. CPU tensors: the backend picks the cpu target from the tensors' device.

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch
import torch.nn.functional as F
from fusec.torch_backend.layout import LayoutError, layout_of


def check(fn, *args):
    """fusec through torch.compile against eager: values, and the strides of every output."""
    want = fn(*args)
    got = torch.compile(fn, backend="fusec")(*args)
    got, want = (got, want) if isinstance(got, tuple) else ((got,), (want,))
    same = all(torch.allclose(g, w, rtol=1e-5, atol=1e-6) for g, w in zip(got, want))
    print("matches eager:", same, "strides:", [g.stride() for g in got] == [w.stride() for w in want])
    print("regions:", ", ".join(f"{r.name} {r.target} {r.status}" for r in tb.reports[-1].regions))


# CHECK-LABEL: TEST: as_strided_after_transposed_exp
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  regions: fusec_region_0 cpu compiled
@run
def as_strided_after_transposed_exp():
    check(lambda x: torch.exp(x.t()).as_strided((2, 3), (2, 1)), torch.randn(3, 3))


# The region returns two outputs, one of them transposed.
# CHECK-LABEL: TEST: transposed_outputs
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  regions: fusec_region_0 cpu compiled
@run
def transposed_outputs():
    def fn(x):
        a = torch.exp(x.transpose(0, 1))
        return a, torch.relu(a) + 1, a.sum(1)

    check(fn, torch.randn(5, 7))


# Rotary embeddings' pattern: heads made by a view and a transpose, arithmetic on them in a region,
# then transposed back and merged by a `view` that only eager's layout allows.
# CHECK-LABEL: TEST: view_after_region
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  regions: fusec_region_0 cpu compiled
@run
def view_after_region():
    def fn(x, cos, sin):
        b, t, d = x.shape
        q = x.view(b, t, 4, d // 4).transpose(1, 2)
        q = q * cos + q.neg() * sin
        return q.transpose(1, 2).view(b, t, d)

    check(fn, torch.randn(2, 6, 32), torch.randn(6, 8), torch.randn(6, 8))


# Attention after a region (its q, k, v in the heads-transposed layout), on the cpu target.
# CHECK-LABEL: TEST: attention_after_region
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  regions: fusec_region_0 cpu compiled
@run
def attention_after_region():
    def fn(x, cos, sin):
        b, t, d = x.shape
        q, k, v = (z.view(b, t, 4, 8).transpose(1, 2) for z in x.split(32, dim=-1))
        q, k = q * cos + q.neg() * sin, k * cos + k.neg() * sin
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return out.transpose(1, 2).reshape(b, t, 32).view(b * t, 32)

    check(fn, torch.randn(2, 6, 96), torch.randn(6, 8), torch.randn(6, 8))


# Inputs that are strided views (transposed, sliced with a step, at an offset) are read right.
# CHECK-LABEL: TEST: strided_inputs
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  regions: fusec_region_0 cpu compiled
@run
def strided_inputs():
    base = torch.randn(8, 12)
    check(lambda a, b, c: torch.sigmoid(a) * b + c.sum(0), base.t()[:6, :7], base[1:, ::2].t(), base[3:, 1:8])


# Layouts: contiguous, permuted, padded (copied into empty_strided), overlapping (refused).
# CHECK-LABEL: TEST: layouts
# CHECK-NEXT:  contiguous: OutputLayout(order=None, strides=None, dtype=None, written=False)
# CHECK-NEXT:  size-1 dims: OutputLayout(order=None, strides=None, dtype=None, written=False)
# CHECK-NEXT:  permuted: OutputLayout(order=(0, 2, 1, 3), strides=None, dtype=None, written=False)
# CHECK-NEXT:  padded: OutputLayout(order=None, strides=(16, 1), dtype=None, written=False)
# CHECK-NEXT:  expanded: LayoutError: output e has overlapping strides (0, 1) (an expand): fusec's outputs are
@run
def layouts():
    cases = {"contiguous": torch.empty(2, 3), "size-1 dims": torch.empty(1, 3, 1).transpose(0, 2),
             "permuted": torch.empty(2, 4, 6, 8).transpose(1, 2), "padded": torch.empty(4, 16)[:, :5],
             "expanded": torch.empty(5).expand(3, 5)}
    for name, t in cases.items():
        try:
            print(f"{name}: {layout_of('e', t)}")
        except LayoutError as err:
            print(f"{name}: LayoutError: {err.message}")
