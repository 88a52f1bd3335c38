# Rows too long for one block's registers, split over a thread-block cluster (codegen/cluster.py):
# each block holds its part of the row in registers, the blocks' partial sums, maxima and
# (count, mean, squares) triples merge through distributed shared memory. Checked against float64
# eager: softmax / log_softmax / LayerNorm at vocabulary sizes (GPT-2's 50257: no vectors, the
# last block's slots masked; Llama 3's 128256 in bf16), a per-row output stored by one block of
# the cluster (the row max), a cluster of 8 forced on a row of 65537 (its last block mostly
# empty), LayerNorm of huge values (the variance overflows as eager's does: 0, not NaN), and the
# same compile twice giving bitwise the same result.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch
import torch.nn.functional as F

import fusec
from fusec.numerics import compare

torch.manual_seed(0)


def softmax_and_max(x):
    return torch.softmax(x, -1), x.amax(-1)


def log_softmax(x):
    return F.log_softmax(x, -1)


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b)


def plain_layer_norm(x):
    return F.layer_norm(x, x.shape[-1:])


def run(name, fn, shapes, dtype, scale=1.0, **options):
    args = tuple((torch.randn(s, device="cuda") * (scale if i == 0 else 1.0)).to(dtype) for i, s in enumerate(shapes))
    compiled = fusec.compile(fn, args, **options)
    clustered = ".reqnctapercluster" in compiled.ptx
    got = compiled(*args)
    got = got if isinstance(got, tuple) else (got,)
    # float64 eager; for huge values eager in their own type (in fp64 the variance does not overflow)
    ref = fn(*(a.double() for a in args)) if scale == 1.0 else fn(*args)
    ref = ref if isinstance(ref, tuple) else (ref,)
    worst = 0.0
    for g, r in zip(got, ref):
        max_abs, ref_scale, _ = compare(g.double().cpu(), r.to(g.dtype).double().cpu())
        tol = (2e-5 if dtype == torch.float32 else 2 ** -7) * max(ref_scale, 1.0)
        worst = max(worst, max_abs / tol)
    again = compiled(*args)
    again = again if isinstance(again, tuple) else (again,)
    same = all(torch.equal(a, g) for a, g in zip(again, got))
    print(f"{name}: {'ok' if worst <= 1.0 else 'WRONG'} (error {worst:.2f} of tolerance) cluster={clustered} "
          f"deterministic={same}")


run("softmax 256x65536 fp32", softmax_and_max, [(256, 65536)], torch.float32)
run("softmax 8x65537 fp32 cluster 8", softmax_and_max, [(8, 65537)], torch.float32, row_cluster=8)
run("log_softmax 64x128256 bf16", log_softmax, [(64, 128256)], torch.bfloat16)
run("log_softmax 300x50257 fp32", log_softmax, [(300, 50257)], torch.float32)
run("layer_norm 96x50257 fp32", layer_norm, [(96, 50257), (50257,), (50257,)], torch.float32)
run("layer_norm 64x65536 bf16 cluster 4", layer_norm, [(64, 65536), (65536,), (65536,)], torch.bfloat16,
    row_cluster=4)
run("layer_norm 16x65536 fp32 huge", plain_layer_norm, [(16, 65536)], torch.float32, scale=1e30)
# A dynamic row count: the grid is rows x 2 blocks (the manifest's `mul`), checked at other rows.
from torch.export import Dim

x = torch.randn(8, 65536, device="cuda")
# (A dynamic row count gets the rule for many rows, the hybrid: the cluster is asked for here.)
dynamic = fusec.compile(lambda x: torch.softmax(x, -1), (x,), dynamic_shapes=({0: Dim("rows")},), row_cluster=2)
for n in (3, 40):
    y = torch.randn(n, 65536, device="cuda")
    err = (dynamic(y).double() - torch.softmax(y.double(), -1)).abs().max().item()
    print(f"dynamic rows {n}: {'ok' if err < 1e-6 else 'WRONG'} cluster={'.reqnctapercluster 2' in dynamic.ptx}")
# CHECK: softmax 256x65536 fp32: ok {{.*}} cluster=True deterministic=True
# CHECK: softmax 8x65537 fp32 cluster 8: ok {{.*}} cluster=True deterministic=True
# CHECK: log_softmax 64x128256 bf16: ok {{.*}} cluster=True deterministic=True
# CHECK: log_softmax 300x50257 fp32: ok {{.*}} cluster=True deterministic=True
# CHECK: layer_norm 96x50257 fp32: ok {{.*}} cluster=True deterministic=True
# CHECK: layer_norm 64x65536 bf16 cluster 4: ok {{.*}} cluster=True deterministic=True
# CHECK: layer_norm 16x65536 fp32 huge: ok {{.*}} cluster=True deterministic=True
# CHECK: dynamic rows 3: ok cluster=True
# CHECK: dynamic rows 40: ok cluster=True
