# Sums over a whole tensor and into few outputs on the GPU: two kernels, partial sums over rows
# (fused with what they sum, many blocks) then their sum, where one block per output summed it all
# (`x.pow(2).mean()` over 32768x4096 was one block of 256 threads). Each result within 2e-6 of
# float64; `split_sums=0` gives the old single kernel, which must agree.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

F = torch.nn.functional
torch.manual_seed(0)


def launches(compiled):
    return [step["grid"][0] for step in compiled.manifest["steps"] if step["op"] == "launch"]


cases = [
    ("mean of squares 4096x4096 bf16", lambda x: x.float().pow(2).mean(), (4096, 4096), torch.bfloat16),
    ("mse 16x3x224x224", lambda a, b: F.mse_loss(a, b), [(16, 3, 224, 224)] * 2, torch.float32),
    ("odd 3001x7001", lambda x: (x - 0.5).abs().mean(), (3001, 7001), torch.float32),
    ("1-D 2**24", lambda x: torch.exp(x * 0.01).sum(), (1 << 24,), torch.float32),
    ("8 rows of 2**22", lambda x: x.sum(dim=-1), (8, 1 << 22), torch.float32),
]
for name, fn, shapes, dtype in cases:
    shapes = shapes if isinstance(shapes, list) else [shapes]
    inputs = tuple(torch.randn(s, device="cuda").to(dtype) for s in shapes)
    split, whole = fusec.compile(fn, inputs), fusec.compile(fn, inputs, split_sums=0)
    ref = fn(*(t.double() for t in inputs))
    errs = [float(((c(*inputs).double() - ref).abs().max() / ref.abs().max())) for c in (split, whole)]
    grids = launches(split)
    shape_ok = len(grids) == 2 and grids[0] >= 64 and grids[1] <= 8
    print(f"{name}: {'ok' if errs[0] < 2e-6 and errs[1] < 2e-6 else 'INACCURATE'}, "
          f"{'split' if shape_ok else 'NOT SPLIT'} (grids {grids}; unsplit {launches(whole)}; errors {errs[0]:.1e}, {errs[1]:.1e})")
# CHECK-NOT: INACCURATE
# CHECK-NOT: NOT SPLIT
# CHECK: mean of squares 4096x4096 bf16: ok, split
# CHECK: mse 16x3x224x224: ok, split
# CHECK: odd 3001x7001: ok, split
# CHECK: 1-D 2**24: ok, split
# CHECK: 8 rows of 2**22: ok, split
