"""Matmuls no fusec kernel builds, run as library calls (--fusec-library-matmuls: torch.mm/bmm in the
runtime, between the kernels), checked against eager in float64 on the device named by argv[1]
(cpu or cuda), with the kernel and library-call counts of each compile. The same models with
library_matmuls off (the generic loop lowering) must match too, with no library call.

Each line: `label: K kernels, L library matmuls, ok` or WRONG with what differs."""

import sys

import torch

import fusec
from fusec.numerics import compare

F = torch.nn.functional
device = torch.device(sys.argv[1])
torch.manual_seed(0)


def steps(compiled) -> tuple[int, int]:
    ops = [s["op"] for s in compiled.manifest["steps"]]
    return len(compiled.manifest["kernels"]), sum(op in ("matmul", "batch_matmul") for op in ops)


def check(label, model, inputs, library, dynamic_shapes=None, settings=(True, False), **options):
    """`library`: the library calls the default compile must make; `settings`: the values of
    library_matmuls compiled."""
    wide = tuple(t.double() for t in inputs)
    with torch.no_grad():
        ref = model(*wide)
    for setting in settings:
        compiled = fusec.compile(model, inputs, dynamic_shapes=dynamic_shapes,
                                 target="cuda" if device.type == "cuda" else "cpu", library_matmuls=setting, **options)
        call_inputs = inputs
        if dynamic_shapes is not None:  # another row count than the example's
            call_inputs = (torch.randn(37, *inputs[0].shape[1:], device=device, dtype=inputs[0].dtype), *inputs[1:])
            with torch.no_grad():
                ref = model(*(t.double() for t in call_inputs))
        out = compiled(*call_inputs)
        bad = []
        max_abs, _, tol = compare(out, ref.to(out.dtype) if out.dtype != torch.float32 else ref)
        if not max_abs <= tol:
            bad.append(f"max abs err {max_abs:.3e} > {tol:.3e}")
        kernels, calls = steps(compiled)
        if calls != (library if setting else 0):
            bad.append(f"{calls} library matmuls, expected {library if setting else 0}")
        what = "library" if setting else "loops"
        print(f"{label} ({what}): {kernels} kernels, {calls} library matmuls, {'ok' if not bad else 'WRONG ' + '; '.join(bad)}")


x = torch.randn(64, 96, device=device)
w, bias = torch.randn(80, 96, device=device) / 10, torch.randn(80, device=device)
check("linear + gelu", lambda x, w, bias: F.gelu(F.linear(x, w, bias)), (x, w, bias), library=1)
a, b = torch.randn(48, 32, device=device), torch.randn(32, 40, device=device)
check("a @ b", lambda a, b: a @ b, (a, b), library=1)
check("a.T @ b", lambda a, b: a.T @ b, (torch.randn(32, 48, device=device), b), library=1)
q, k = torch.randn(4, 16, 24, device=device), torch.randn(4, 20, 24, device=device)
check("softmax(q @ k^T)", lambda q, k: torch.softmax(q @ k.transpose(-2, -1) * 0.2, -1), (q, k), library=1)
check("two linears", lambda x, w: F.linear(x, w) @ w[:, :80], (x, w), library=2)
# nn.Linear of a 3-d input that is not contiguous (an attention block's output projection): one
# matmul over the batch's rows, the weight read once (--fusec-broadcast-batch-matmuls), not a copy of
# it per batch for a batched matmul.
heads = torch.randn(2, 4, 16, 24, device=device)
check("linear of heads", lambda h, w: F.linear(h.transpose(1, 2).reshape(2, 16, 96), w), (heads, w), library=1)
# (The loop lowering of a matmul with a dynamic row count does not compile for the GPU: its host
# code compares sizes. The library takes it.)
rows = torch.export.Dim("rows", min=2, max=4096)
check("linear, dynamic rows", lambda x, w, bias: F.relu(F.linear(x, w, bias)), (x, w, bias), library=1,
      dynamic_shapes=({0: rows}, None, None), settings=(True,) if device.type == "cuda" else (True, False))
# bf16 (the tensor cores' kernel off): the library writes a bf16 result, accumulated in fp32
# (--fusec-narrow-library-matmuls); the product alone is the output as it comes, an epilogue reads it
# widened.
xb = torch.randn(64, 96, device=device, dtype=torch.bfloat16)
wb = torch.randn(80, 96, device=device, dtype=torch.bfloat16) / 10
bb = torch.randn(80, device=device, dtype=torch.bfloat16)
check("bf16 x @ w.T", lambda x, w: x @ w.T, (xb, wb), library=1, wgmma=False)
check("bf16 linear + gelu", lambda x, w, b: F.gelu(F.linear(x, w, b)), (xb, wb, bb), library=1, wgmma=False)
check("bf16 linear + gelu, dynamic rows", lambda x, w, b: F.gelu(F.linear(x, w, b)), (xb, wb, bb), library=1,
      dynamic_shapes=({0: rows}, None, None), settings=(True,))
# An attention block's output projection with a dynamic batch: the heads merged in bf16 (the
# transpose under the reshape, moved below the cast by --fusec-contraction-operands) and the copy
# sized from the input's batch. It stopped at a host `affine.apply` (the cpu target) and a host
# `arith.cmpi` of a dead transpose kept alive by a `tensor.dim` (cuda).
batch = torch.export.Dim("batch", min=1, max=64)
hb = torch.randn(2, 4, 16, 24, device=device, dtype=torch.bfloat16)
check("bf16 linear of heads, dynamic batch",
      lambda h, w, b: F.linear(h.transpose(1, 2).reshape(h.shape[0], 16, 96), w, b), (hb, wb, bb), library=1,
      dynamic_shapes=({0: batch}, None, None), settings=(True,))
# q, k and v split from one projection: the library reads each slice where it lies (a strided view of
# the projection: the manifest's offset and strides, fusec-fold-layout-ops{library-slices=1}), where
# a kernel copied q, k and v first. The loop lowering still reads copies.
qkv = torch.randn(4, 32, 72, device=device)
check("attention of q, k, v split", lambda t: torch.softmax(
    t[..., :24] @ t[..., 24:48].transpose(-1, -2) * 0.2, -1) @ t[..., 48:], (qkv,), library=2)
check("x[:, 32:] @ w.T, dynamic rows", lambda x, w: x[:, 32:] @ w[:, :64].T, (x, w), library=1,
      dynamic_shapes=({0: rows}, None), settings=(True,))
# torch's select is a slice and a squeeze of the unit dim: read as a rank-reducing strided view too.
x3 = torch.randn(4, 128, 64, device=device)
check("x[1] @ b", lambda x, b: x[1] @ b, (x3, torch.randn(64, 32, device=device)), library=1)
check("x[:, 1] @ w.T", lambda x, w: x[:, 1] @ w.T, (x3, torch.randn(48, 64, device=device)), library=1)
