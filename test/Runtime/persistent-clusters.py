# `row_persistent`: a row split over a cluster is one of a loop, each cluster taking rows K apart,
# and the runtime launches only as many clusters K as the GPU runs at once (cuOccupancyMaxActiveClusters),
# fewer than the manifest's grid. Checked against float64 eager: softmax (two cluster rounds a row),
# a row divided by its sum and LayerNorm (one round: a barrier ends each row, so the next row's
# value is not written while a peer still reads the last), rows that do not divide among the
# clusters, a dynamic row count (the grid clamped at each call), and bitwise-equal repeated calls.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s
# CHECK: softmax 1024x128256 bf16: ok {{.*}} fewer blocks than the manifest's=True deterministic=True
# CHECK: share 511x65536 fp32: ok {{.*}} fewer blocks than the manifest's=True deterministic=True
# CHECK: layer_norm 300x50257 fp32: ok {{.*}} fewer blocks than the manifest's=True deterministic=True
# CHECK: dynamic rows 3: ok
# CHECK: dynamic rows 700: ok

import torch
import torch.nn.functional as F
from torch.export import Dim

import fusec
from fusec.numerics import compare

torch.manual_seed(0)


def run(name, fn, shapes, dtype):
    args = tuple(torch.randn(s, device="cuda").to(dtype) for s in shapes)
    compiled = fusec.compile(fn, args, row_persistent=True)
    got = compiled(*args)
    launch = compiled.manifest["steps"][0]
    clamped = launch.get("persistent_clusters") is not None and \
        compiled._executable._plan.steps[0].grid[0] < launch["grid"][0]
    max_abs, scale, _ = compare(got.double().cpu(), fn(*(a.double() for a in args)).to(dtype).double().cpu())
    tol = (2e-5 if dtype == torch.float32 else 2 ** -7) * max(scale, 1.0)
    same = torch.equal(compiled(*args), got)
    print(f"{name}: {'ok' if max_abs <= tol else 'WRONG'} (error {max_abs / tol:.2f} of tolerance) "
          f"fewer blocks than the manifest's={clamped} deterministic={same}")


run("softmax 1024x128256 bf16", lambda x: torch.softmax(x, -1), [(1024, 128256)], torch.bfloat16)
run("share 511x65536 fp32", lambda x: x.abs() / x.abs().sum(-1, keepdim=True), [(511, 65536)], torch.float32)
run("layer_norm 300x50257 fp32", lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b),
    [(300, 50257), (50257,), (50257,)], torch.float32)

x = torch.randn(8, 65536, device="cuda")
dynamic = fusec.compile(lambda x: torch.softmax(x, -1), (x,), dynamic_shapes=({0: Dim("rows")},), row_cluster=2,
                        row_persistent=True)
for n in (3, 700):
    y = torch.randn(n, 65536, device="cuda")
    err = (dynamic(y).double() - torch.softmax(y.double(), -1)).abs().max().item()
    print(f"dynamic rows {n}: {'ok' if err < 1e-6 else 'WRONG'}")
