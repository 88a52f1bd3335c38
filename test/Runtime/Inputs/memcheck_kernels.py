"""One kernel of each row, column and flat schedule that reads or writes past a boundary if any does:
run under `compute-sanitizer --tool memcheck` by test/Runtime/memcheck.test. Each is compiled with
fusec, called, and compared with eager in float64; the shapes are small (the sanitizer is slow) but
take the same schedules as the large ones (the plan decides from rows and row length, not bytes)."""

import torch
import torch.nn.functional as F
from torch.export import Dim

import fusec
from fusec.numerics import compare

torch.manual_seed(0)
bf16, fp32 = torch.bfloat16, torch.float32


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b)


def check(name, fn, shapes, dtype, dynamic_shapes=None, targets=None, **knobs):
    args = tuple(torch.randn(s, device="cuda").to(dtype) for s in shapes)
    if targets is not None:  # a class index a row (cross-entropy's)
        args += (torch.randint(0, shapes[0][-1], (shapes[0][0],), device="cuda"),)
    compiled = fusec.compile(fn, args, dynamic_shapes=dynamic_shapes, **knobs)
    got = compiled(*args)
    torch.cuda.synchronize()
    want = fn(*(a.double() if a.is_floating_point() else a for a in args))
    max_abs, scale, _ = compare(got.double().cpu(), want.to(dtype).double().cpu())
    tol = (2e-5 if dtype == fp32 else 2 ** -7) * max(scale, 1.0)
    schedule = compiled.compilation.schedules[0]
    kind = "+".join(k for k in ("cluster", "persistent", "next_row", "windows", "vectors_in_registers", "slices")
                    if k in schedule)
    print(f"{name}: {'ok' if max_abs <= tol else 'WRONG'} {schedule['schedule']} {kind}", flush=True)


softmax = lambda x: torch.softmax(x, -1)  # noqa: E731
check("softmax 100x128256 bf16 (long-row rule, clusters of 8)", softmax, [(100, 128256)], bf16)
check("softmax 80x262144 bf16 (long-row rule, clusters of 16)", softmax, [(80, 262144)], bf16)
check("softmax 600x30001 bf16 (long-row rule, one block, odd)", softmax, [(600, 30001)], bf16)
check("logsumexp 600x30001 bf16 (online pass, odd)", lambda x: torch.logsumexp(x.float(), -1), [(600, 30001)], bf16)
check("cross_entropy 100x128256 bf16 (long-row rule, clusters of 8, a read-only row)",
      lambda x, t: F.cross_entropy(x.float(), t), [(100, 128256)], bf16, targets=True, online_softmax=False)
check("log_softmax 600x50257 bf16 (hybrid, odd)", lambda x: torch.log_softmax(x.float(), -1).to(x.dtype),
      [(600, 50257)], bf16)
check("layer_norm 90x100003 bf16 (long-row rule, odd)", layer_norm, [(90, 100003), (100003,), (100003,)], bf16)
check("softmax 60x65536 fp32 (cluster of 2)", softmax, [(60, 65536)], fp32)
check("rmsnorm 517x32001 fp32 (persistent clusters of 8, next row)",
      lambda x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w, [(517, 32001), (32001,)], fp32,
      row_persistent=True, persistent_prefetch=True, row_cluster=8)
check("softmax dynamic rows bf16 (long-row rule)", softmax, [(77, 128256)], bf16, dynamic_shapes=({0: Dim("rows")},))
check("column sum 4096x3072 fp32 (columns)", lambda x: x.sum(0), [(4096, 3072)], fp32)
check("column sum 77x1001 fp32 (columns, 4 slices, a part block, masked rows)", lambda x: x.sum(0), [(77, 1001)], fp32,
      column_slices=0)
check("column max 250x1000 bf16 (columns, 8 slices)", lambda x: x.amax(0), [(250, 1000)], bf16, column_slices=0)
check("gelu bias 300x7001 fp32 (flat, odd)", lambda x, b: F.gelu(x + b), [(300, 7001), (7001,)], fp32)
check("softmax 4096x1000 bf16 (rows of a warp)", softmax, [(4096, 1000)], bf16)
