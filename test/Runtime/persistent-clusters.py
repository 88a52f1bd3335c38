# `row_persistent`: a row split over a cluster is one of a loop, each cluster taking rows K apart,
# and the runtime launches only as many clusters K as the GPU runs at once (cuOccupancyMaxActiveClusters),
# fewer than the manifest's grid. Checked against float64 eager: softmax (two cluster rounds a row),
# a row divided by its sum and LayerNorm (one round: a barrier ends each row, so the next row's
# value is not written while a peer still reads the last), rows that do not divide among the
# clusters, a dynamic row count (the grid clamped at each call), and bitwise-equal repeated calls.
# With `persistent_prefetch`, where two copies of a thread's share of the row fit its registers
# (`next_row`: clusters of 8 here), the loop carries the next row's loads: rows of a whole number of vectors, rows of odd width (their
# head and tail elements carried too, `windows`), and the last row loaded again by every cluster.
# A cluster of 16 blocks (past the portable 8: the runtime opts the kernel in) loops the same way.
# A row of one block loops the same way (`--row-cluster` 0 or 1: the runtime launches as many blocks
# as run at once, from cuOccupancyMaxActiveBlocksPerMultiprocessor; a block barrier ends each row).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s
# CHECK: softmax 1024x128256 bf16: ok {{.*}} fewer blocks than the manifest's=True deterministic=True
# CHECK: share 511x65536 fp32: ok {{.*}} fewer blocks than the manifest's=True deterministic=True
# CHECK: layer_norm 300x50257 fp32: ok {{.*}} fewer blocks than the manifest's=True deterministic=True
# CHECK: softmax 1024x128256 bf16 c8: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: log_softmax 300x50257 bf16 c8: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: rmsnorm 517x32001 fp32 c8: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: softmax 256x262144 bf16 c16: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: softmax 4096x32768 bf16 block: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: layer_norm 3000x7001 fp32 block: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: sum 20000x1000 fp32 block: ok {{.*}} fewer blocks than the manifest's=True deterministic=True next_row=True
# CHECK: dynamic rows 3: ok
# CHECK: dynamic rows 700: ok
# CHECK: dynamic rows c8 1: ok
# CHECK: dynamic rows c8 333: ok
# CHECK: dynamic rows block 5: ok
# CHECK: dynamic rows block 9999: ok

import torch
import torch.nn.functional as F
from torch.export import Dim

import fusec
from fusec.numerics import compare

torch.manual_seed(0)


def run(name, fn, shapes, dtype, **knobs):
    args = tuple(torch.randn(s, device="cuda").to(dtype) for s in shapes)
    # tuning=False: the shipped H200 table knows softmax 4096x32768 bf16 and would replace the knobs asked for.
    compiled = fusec.compile(fn, args, row_persistent=True, persistent_prefetch=bool(knobs), tuning=False, **knobs)
    got = compiled(*args)
    launch = compiled.manifest["steps"][0]
    clamped = launch.get("persistent_clusters") is not None and \
        compiled._executable._plan.steps[0].grid[0] < launch["grid"][0]
    max_abs, scale, _ = compare(got.double().cpu(), fn(*(a.double() for a in args)).to(dtype).double().cpu())
    tol = (2e-5 if dtype == torch.float32 else 2 ** -7) * max(scale, 1.0)
    same = torch.equal(compiled(*args), got)
    print(f"{name}: {'ok' if max_abs <= tol else 'WRONG'} (error {max_abs / tol:.2f} of tolerance) "
          f"fewer blocks than the manifest's={clamped} deterministic={same}"
          + (f" next_row={compiled.compilation.schedules[0].get('next_row', False)}" if knobs else ""))


run("softmax 1024x128256 bf16", lambda x: torch.softmax(x, -1), [(1024, 128256)], torch.bfloat16)
run("share 511x65536 fp32", lambda x: x.abs() / x.abs().sum(-1, keepdim=True), [(511, 65536)], torch.float32)
run("layer_norm 300x50257 fp32", lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b),
    [(300, 50257), (50257,), (50257,)], torch.float32)
run("softmax 1024x128256 bf16 c8", lambda x: torch.softmax(x, -1), [(1024, 128256)], torch.bfloat16, row_cluster=8)
run("log_softmax 300x50257 bf16 c8", lambda x: torch.log_softmax(x.float(), -1).to(x.dtype), [(300, 50257)],
    torch.bfloat16, row_cluster=8)
run("rmsnorm 517x32001 fp32 c8", lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w,
    [(517, 32001), (32001,)], torch.float32, row_cluster=8)
run("softmax 256x262144 bf16 c16", lambda x: torch.softmax(x, -1), [(256, 262144)], torch.bfloat16, row_cluster=16,
    vectors=8, row_registers=64)
run("softmax 4096x32768 bf16 block", lambda x: torch.softmax(x, -1), [(4096, 32768)], torch.bfloat16, row_cluster=1)
run("layer_norm 3000x7001 fp32 block", lambda x, w, b: F.layer_norm(x, x.shape[-1:], w, b),
    [(3000, 7001), (7001,), (7001,)], torch.float32, row_cluster=1)
run("sum 20000x1000 fp32 block", lambda x: x.abs() / x.abs().sum(-1, keepdim=True), [(20000, 1000)], torch.float32,
    row_cluster=1)


def dynamic_rows(name, width, counts, **knobs):
    """Softmax over a dynamic row count, compiled once, called at each of `counts` rows."""
    x = torch.randn(8, width, device="cuda")
    compiled = fusec.compile(lambda x: torch.softmax(x, -1), (x,), dynamic_shapes=({0: Dim("rows")},),
                             row_persistent=True, persistent_prefetch=True, **knobs)
    for n in counts:
        y = torch.randn(n, width, device="cuda")
        err = (compiled(y).double() - torch.softmax(y.double(), -1)).abs().max().item()
        print(f"{name} {n}: {'ok' if err < 1e-6 else 'WRONG'}")


dynamic_rows("dynamic rows", 65536, (3, 700), row_cluster=2)
dynamic_rows("dynamic rows c8", 65536, (1, 333), row_cluster=8)
dynamic_rows("dynamic rows block", 4096, (5, 9999))
