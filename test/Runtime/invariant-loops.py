# The invariant loop on the GPU (codegen/invariant_dims.py, flat.py's `_looped`): kernels whose
# threads keep one vector of (q, k) or (seq, dim) and loop over batch and heads, the work that reads
# neither done once, before the loop. Checked against eager in float64 (fusec's tolerances) and
# against the same compile with `invariant_loops=False` (a thread per vector: the same arithmetic,
# so bitwise the same result): T5's encoder and decoder biases (the bucket member, [q, k, heads]
# read as [heads, q, k], computed with vectors along k) in bf16 and fp32, a width that is not whole
# vectors (lanes 1, a last block of threads half out of range), few points per thread (the loop
# split over blocks), and angles computed in the kernel (cos and sin of position x frequency).

# REQUIRES: cuda
# RUN: %python %s %S/../CPU/Inputs | FileCheck %s

import sys

import torch

import fusec
from fusec.numerics import compare

sys.path.insert(0, sys.argv[1])
from t5_buckets import T5Bias  # noqa: E402 (test/CPU/Inputs, the first argument)

torch.manual_seed(0)
cuda = torch.device("cuda")


def rotary_angles(x, y, inv_freq):
    angle = torch.arange(x.shape[2], device=x.device, dtype=torch.float32)[:, None] * inv_freq[None, :]
    return x * angle.cos() + y * angle.sin()


def run(name, fn, args):
    looped = fusec.compile(fn, args)
    plain = fusec.compile(fn, args, invariant_loops=False)
    kernels = looped.compilation.schedules
    got, other = looped(*args), plain(*args)
    ref = fn(*(a.double() if a.is_floating_point() else a for a in args))
    max_abs, scale, _ = compare(got.double().cpu(), ref.to(got.dtype).double().cpu())
    tol = (2e-5 if got.dtype == torch.float32 else 2 ** -7) * max(scale, 1.0)
    loops = [(k.get("loop_dims"), k.get("loop_trips"), k["lanes"]) for k in kernels]
    print(f"{name}: {'ok' if max_abs <= tol else 'WRONG'} (error {max_abs / tol:.2f} of tolerance) "
          f"kernels={len(kernels)} loops={loops} same_as_plain={torch.equal(got, other)}")


past = torch.tensor(0, device=cuda)
for shape, dtype in (((8, 8, 512, 512), torch.bfloat16), ((4, 12, 1000, 1000), torch.float32),
                     ((2, 7, 300, 301), torch.bfloat16), ((2, 4, 64, 64), torch.float32)):
    model = T5Bias(shape[1]).to(cuda, dtype)
    run(f"t5 bias {'x'.join(map(str, shape))} {str(dtype)[6:]}", model,
        (torch.randn(shape, device=cuda, dtype=dtype), past))
decoder = T5Bias(8, bidirectional=False).to(cuda, torch.bfloat16)
run("t5 decoder bias 4x8x1x333 past 37 bfloat16", decoder,
    (torch.randn(4, 8, 1, 333, device=cuda, dtype=torch.bfloat16), torch.tensor(37, device=cuda)))
run("t5 decoder bias 4x8x256x256 bfloat16", decoder,
    (torch.randn(4, 8, 256, 256, device=cuda, dtype=torch.bfloat16), past))
for dtype in (torch.float32, torch.bfloat16):
    x, y = (torch.randn(8, 32, 512, 64, device=cuda, dtype=dtype) for _ in range(2))
    run(f"rotary angles 8x32x512x64 {str(dtype)[6:]}", rotary_angles, (x, y, torch.rand(64, device=cuda)))
# CHECK-NOT: WRONG
# CHECK: t5 bias 8x8x512x512 bfloat16: ok {{.*}} kernels=1 loops=[('1,0', 8, 8)] same_as_plain=True
# CHECK: t5 bias 4x12x1000x1000 float32: ok {{.*}} kernels=1 loops=[('1,0', {{[0-9]+}}, 4)] same_as_plain=True
# CHECK: t5 bias 2x7x300x301 bfloat16: ok {{.*}} kernels=1 loops=[('1,0', {{[0-9]+}}, 1)] same_as_plain=True
# CHECK: t5 bias 2x4x64x64 float32: ok {{.*}} kernels=1 loops=[('1,0', 1, 4)] same_as_plain=True
# CHECK: t5 decoder bias 4x8x1x333 past 37 bfloat16: ok
# CHECK: t5 decoder bias 4x8x256x256 bfloat16: ok {{.*}} kernels=1 loops=[('1,0', {{[0-9]+}}, 8)] same_as_plain=True
# CHECK: rotary angles 8x32x512x64 float32: ok {{.*}} kernels=1 loops=[('0,1', 8, 4)] same_as_plain=True
# CHECK: rotary angles 8x32x512x64 bfloat16: ok {{.*}} kernels=1 loops=[('0,1', {{[0-9]+}}, 8)] same_as_plain=True
