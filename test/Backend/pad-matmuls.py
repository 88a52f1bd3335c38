# The backend's matmul padding (fusec.torch_backend.pad_matmuls): a product whose K or N is not a
# multiple of 8 is rewritten on zero-padded operands and sliced back, with the same values: mm with
# a Linear's column-major weight (GPT-2's LM head), addmm with its bias, bmm. An operand that grows
# in one dim is a `cat` with zeros (one pass over it), one that grows in two `constant_pad_nd`. A product that leaves
# the graph is a view of the padded one (as Inductor returns it): its rows are 24 apart, not 21. On the CPU nothing is padded (cuBLAS's alignment is a GPU
# matter): the products are rewritten here by `pad_product`, which skips the timing.
# RUN: %python %s | FileCheck %s
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from fusec.torch_backend.pad_matmuls import pad_matmuls, pad_product, paddings

aten = torch.ops.aten
torch.manual_seed(0)


def rewritten(fn, args):
    """fn traced, its unaligned products rewritten: (pads, result, eager's, the graph's ops)."""
    gm = make_fx(fn, tracing_mode="fake")(*args)
    products = [n for n in gm.graph.nodes if n.target in (aten.mm.default, aten.addmm.default, aten.bmm.default)]
    pads = [paddings(n) for n in products]
    for n in products:
        if paddings(n):
            pad_product(gm, n)
    gm.graph.lint()
    gm.recompile()
    ops = sorted({str(n.target).removeprefix("aten.") for n in gm.graph.nodes if n.op == "call_function"})
    return pads, gm(*args), fn(*args), ", ".join(ops)


def check(name, fn, *args):
    pads, got, want, ops = rewritten(fn, args)
    print(f"{name}: paddings {pads}; same values: {torch.allclose(got, want, atol=1e-5)}; "
          f"strides: {list(got.stride())}; ops: {ops}")


weight = torch.randn(21, 16)  # a Linear's [N, K]: N = 21 is not a multiple of 8
check("lm head", lambda h, w: (h.view(-1, 16) @ w.t()).view(2, 3, 21), torch.randn(2, 3, 16), weight)
# CHECK: lm head: paddings [(0, 3)]; same values: True; strides: [72, 24, 1]; ops: cat.default, mm.default, new_zeros.default, slice.Tensor, t.default, transpose.int, view.default

check("addmm, K and N odd", lambda x, w, b: torch.nn.functional.linear(x, w, b), torch.randn(5, 13), torch.randn(21, 13),
      torch.randn(21))
# CHECK: addmm, K and N odd: paddings [(3, 3)]; same values: True; strides: [24, 1]; ops: {{.*}}addmm.default, cat.default, constant_pad_nd.default, new_zeros.default, slice.Tensor

check("bmm", lambda a, b: torch.bmm(a, b) * 2, torch.randn(3, 4, 13), torch.randn(3, 13, 10))
# CHECK: bmm: paddings [(3, 6)]; same values: True; strides: [40, 10, 1]; ops: bmm.default, cat.default, constant_pad_nd.default, mul.Tensor, new_zeros.default, slice.Tensor

check("aligned", lambda a, b: a @ b, torch.randn(4, 16), torch.randn(16, 24))
# CHECK: aligned: paddings [None]; same values: True; strides: [24, 1]; ops: mm.default

gm = make_fx(lambda a, b: a @ b, tracing_mode="fake")(torch.randn(4, 13), torch.randn(13, 21))
print("cpu tensors, pad_matmuls:", pad_matmuls(gm))
# CHECK: cpu tensors, pad_matmuls: []

# A view that merges the padded dim with another cannot view the sliced rows: the slice is copied
# to contiguous rows first (a `clone` after it), and the view holds.
check("flattened", lambda a, b: (a @ b).view(-1) * 2, torch.randn(4, 13), torch.randn(13, 21))
# CHECK: flattened: paddings [(3, 3)]; same values: True; strides: [1]; ops: cat.default, clone.default, constant_pad_nd.default, mm.default, mul.Tensor, new_zeros.default, slice.Tensor, view.default

