# Rows whose width is not a whole number of 128-bit vectors, read as a body of vectors aligned to the
# buffer and a head and tail an element at a time (codegen/windows.py; the `row_windows` knob, on by
# default): each row's phase, the body's vector loads and stores, the edges' elements folded in by a
# few threads, a slot past the body masked.
# Checked against float64 eager at widths from 17 to 128257, few rows and many, both dtypes:
# softmax, log_softmax and logsumexp (vocabulary rows), cross-entropy (a gather of the target by the
# iota, the mean), a -inf mask read a byte a lane, LayerNorm with its weight and bias (operands of
# another shape: read a lane at a time), RMSNorm, the row loop and the cluster, a dynamic row count.
# Each prints whether the kernel took windows, its lanes, and its error as a fraction of the
# tolerance; the same compile twice gives bitwise the same result.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch
import torch.nn.functional as F
from torch.export import Dim

import fusec
from fusec.numerics import compare

torch.manual_seed(0)


def softmax(x):
    return torch.softmax(x, -1)


def log_softmax(x):
    return F.log_softmax(x, -1)


def logsumexp(x):
    return torch.logsumexp(x, -1)


def cross_entropy(x, t):
    return F.cross_entropy(x, t)


def masked_softmax(x, keep):
    return torch.softmax(x.masked_fill(~keep, float("-inf")), -1)


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b)


def rms_norm(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def make(shape, dtype, kind):
    if kind == "target":
        return torch.randint(0, shape[1], (shape[0],), device="cuda")
    if kind == "keep":
        keep = torch.rand(shape, device="cuda") > 0.3
        keep[:, 0] = True
        return keep
    return torch.randn(shape, device="cuda").to(dtype)


def run(name, fn, specs, dtype, **options):
    args = tuple(make(shape, dtype, kind) for shape, kind in specs)
    compiled = fusec.compile(fn, args, row_windows=True, **options)
    record = compiled.compilation.schedules
    windowed = [k for k in record if k.get("windows")]
    got = compiled(*args)
    got = got if isinstance(got, tuple) else (got,)
    ref = fn(*(a.double() if a.is_floating_point() else a for a in args))
    ref = ref if isinstance(ref, tuple) else (ref,)
    worst = 0.0
    for g, r in zip(got, ref):
        max_abs, ref_scale, _ = compare(g.double().cpu(), r.to(g.dtype).double().cpu())
        tol = (2e-5 if dtype == torch.float32 else 2 ** -7) * max(ref_scale, 1.0)
        worst = max(worst, max_abs / tol)
    again = compiled(*args)
    again = again if isinstance(again, tuple) else (again,)
    same = all(torch.equal(a, g) for a, g in zip(again, got))
    lanes = sorted({k["lanes"] for k in windowed})
    print(f"{name}: {'ok' if worst <= 1.0 else 'WRONG'} (error {worst:.2f} of tolerance) "
          f"windows={len(windowed)} lanes={lanes} {sorted({k['schedule'] for k in windowed})} deterministic={same}")


X = "x"
run("softmax 4096x50257 bf16", softmax, [((4096, 50257), X)], torch.bfloat16)
run("softmax 64x50257 fp32", softmax, [((64, 50257), X)], torch.float32)
run("log_softmax 300x50257 fp32", log_softmax, [((300, 50257), X)], torch.float32)
run("log_softmax 16x128257 bf16", log_softmax, [((16, 128257), X)], torch.bfloat16)
run("logsumexp 8192x7001 fp32", logsumexp, [((8192, 7001), X)], torch.float32)
run("cross_entropy 1024x50257 bf16", cross_entropy, [((1024, 50257), X), ((1024, 50257), "target")], torch.bfloat16)
run("masked softmax 3x1001 fp32", masked_softmax, [((3, 1001), X), ((3, 1001), "keep")], torch.float32)
run("masked softmax 2000x1001 bf16", masked_softmax, [((2000, 1001), X), ((2000, 1001), "keep")], torch.bfloat16)
run("layer_norm 1000x7001 fp32", layer_norm, [((1000, 7001), X), ((7001,), X), ((7001,), X)], torch.float32)
run("layer_norm 7x1001 bf16", layer_norm, [((7, 1001), X), ((1001,), X), ((1001,), X)], torch.bfloat16)
run("rms_norm 5000x3001 bf16", rms_norm, [((5000, 3001), X), ((3001,), X)], torch.bfloat16)
run("softmax 1000x17 fp32", softmax, [((1000, 17), X)], torch.float32)
run("softmax 1x33 bf16", softmax, [((1, 33), X)], torch.bfloat16)
run("softmax 64x50257 fp32 row loop", softmax, [((64, 50257), X)], torch.float32, row_cluster=1)
run("layer_norm 32x65541 bf16 cluster 8", layer_norm, [((32, 65541), X), ((65541,), X), ((65541,), X)],
    torch.bfloat16, row_cluster=8)
run("softmax 512x50257 bf16 hybrid", softmax, [((512, 50257), X)], torch.bfloat16, row_cluster=1, vectors=8)
run("layer_norm 1024x50257 fp32 hybrid", layer_norm, [((1024, 50257), X), ((50257,), X), ((50257,), X)],
    torch.float32)
run("softmax 600x65536 bf16 hybrid", softmax, [((600, 65536), X)], torch.bfloat16)
# CHECK-NOT: WRONG
# CHECK: softmax 4096x50257 bf16: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: softmax 64x50257 fp32: ok {{.*}} windows=1 lanes=[4] {{.*}} deterministic=True
# CHECK: log_softmax 300x50257 fp32: ok {{.*}} windows=1 lanes=[4] {{.*}} deterministic=True
# CHECK: log_softmax 16x128257 bf16: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: logsumexp 8192x7001 fp32: ok {{.*}} windows=1 lanes=[4] {{.*}} deterministic=True
# CHECK: cross_entropy 1024x50257 bf16: ok {{.*}} lanes=[8] {{.*}} deterministic=True
# CHECK: masked softmax 3x1001 fp32: ok {{.*}} windows=1 lanes=[16] {{.*}} deterministic=True
# CHECK: masked softmax 2000x1001 bf16: ok {{.*}} windows=1 lanes=[16] {{.*}} deterministic=True
# CHECK: layer_norm 1000x7001 fp32: ok {{.*}} windows=1 lanes=[4] {{.*}} deterministic=True
# CHECK: layer_norm 7x1001 bf16: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: rms_norm 5000x3001 bf16: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: softmax 1000x17 fp32: ok {{.*}} windows=1 lanes=[4] {{.*}} deterministic=True
# CHECK: softmax 1x33 bf16: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: softmax 64x50257 fp32 row loop: ok {{.*}} windows=1 lanes=[4] ['row_loop'] deterministic=True
# CHECK: layer_norm 32x65541 bf16 cluster 8: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: softmax 512x50257 bf16 hybrid: ok {{.*}} windows=1 lanes=[8] {{.*}} deterministic=True
# CHECK: layer_norm 1024x50257 fp32 hybrid: ok {{.*}} windows=1 lanes=[4] {{.*}} deterministic=True
# CHECK: softmax 600x65536 bf16 hybrid: ok {{.*}} windows=0 lanes=[] {{.*}} deterministic=True

# A dynamic row count: the phase of each row is computed from its index, whatever the batch.
x = torch.randn(8, 50257, device="cuda")
dynamic = fusec.compile(log_softmax, (x,), row_windows=True, dynamic_shapes=({0: Dim("rows")},))
for n in (1, 3, 77):
    y = torch.randn(n, 50257, device="cuda")
    err = (dynamic(y).double() - F.log_softmax(y.double(), -1)).abs().max().item()
    windowed = any(k.get("windows") for k in dynamic.compilation.schedules)
    print(f"dynamic rows {n}: {'ok' if err < 1e-5 else 'WRONG'} windows={windowed}")
# CHECK: dynamic rows 1: ok windows=True
# CHECK: dynamic rows 3: ok windows=True
# CHECK: dynamic rows 77: ok windows=True
