# Short rows, several a block (the `rows_per_block` knob, codegen/row_registers.py): rows that take one
# warp each (at most 128 vectors) share a block of 8, 4 or 2 warps, each warp its row, combined by its
# shuffles alone. Checked against float64 eager: softmax, log_softmax, LayerNorm (weight and bias),
# RMSNorm, a -inf mask (a whole row masked: NaN, as eager), odd widths (the aligned body and its
# edges), row counts that 8, 4 or only 2 divide, the knob's own count, and 1 (a row a block) for
# comparison. Each prints its rows per block and its error as a fraction of the tolerance.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch
import torch.nn.functional as F

import fusec
from fusec.numerics import compare

torch.manual_seed(0)


def softmax(x):
    return torch.softmax(x, -1)


def log_softmax(x):
    return F.log_softmax(x, -1)


def layer_norm(x, w, b):
    return F.layer_norm(x, x.shape[-1:], w, b)


def rms_norm(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


def masked_softmax(x, keep):
    return torch.softmax(x.masked_fill(~keep, float("-inf")), -1)


def run(name, fn, shapes, dtype, keep=False, **options):
    args = [torch.randn(s, device="cuda").to(dtype) for s in shapes]
    if keep:
        mask = torch.rand(shapes[0], device="cuda") > 0.3
        mask[5] = False  # a whole row masked
        args.append(mask)
    compiled = fusec.compile(fn, tuple(args), **options)
    per_block = sorted({k.get("rows_per_block", 1) for k in compiled.compilation.schedules
                        if k["schedule"] == "row_registers"})
    got = compiled(*args)
    ref = fn(*(a.double() if a.is_floating_point() else a for a in args)).to(dtype)
    max_abs, ref_scale, _ = compare(got.double().cpu(), ref.double().cpu())
    tol = (2e-5 if dtype == torch.float32 else 2 ** -7) * max(ref_scale, 1.0)
    nan_same = torch.equal(got.isnan().cpu(), ref.isnan().cpu())
    same = torch.allclose(compiled(*args), got, rtol=0, atol=0, equal_nan=True)  # bitwise, NaN rows too
    print(f"{name}: {'ok' if max_abs <= tol and nan_same else 'WRONG'} (error {max_abs / tol:.2f} of tolerance) "
          f"rows_per_block={per_block} deterministic={same}")


run("softmax 65536x512 fp32", softmax, [(65536, 512)], torch.float32)
run("softmax 65536x512 fp32 8 a block", softmax, [(65536, 512)], torch.float32, rows_per_block=8)
run("log_softmax 300x256 bf16", log_softmax, [(300, 256)], torch.bfloat16)
run("layer_norm 50432x768 bf16", layer_norm, [(50432, 768), (768,), (768,)], torch.bfloat16)
run("layer_norm 66x197 fp32", layer_norm, [(66, 197), (197,), (197,)], torch.float32)
run("rms_norm 131072x512 bf16", rms_norm, [(131072, 512), (512,)], torch.bfloat16)
run("masked softmax 4096x77 fp32", masked_softmax, [(4096, 77)], torch.float32, keep=True)
run("softmax 4096x33 bf16 4 a block", softmax, [(4096, 33)], torch.bfloat16, rows_per_block=4)
# (The heuristic shares a block among rows of at most 2 vectors a thread: 512 floats and 768 bf16
# take 4 and 3, a row a block.)
# CHECK-NOT: WRONG
# CHECK: softmax 65536x512 fp32: ok {{.*}} rows_per_block=[1] deterministic=True
# CHECK: softmax 65536x512 fp32 8 a block: ok {{.*}} rows_per_block=[8] deterministic=True
# CHECK: log_softmax 300x256 bf16: ok {{.*}} rows_per_block=[4] deterministic=True
# CHECK: layer_norm 50432x768 bf16: ok {{.*}} rows_per_block=[1] deterministic=True
# CHECK: layer_norm 66x197 fp32: ok {{.*}} rows_per_block=[2] deterministic=True
# CHECK: rms_norm 131072x512 bf16: ok {{.*}} rows_per_block=[8] deterministic=True
# CHECK: masked softmax 4096x77 fp32: ok {{.*}} rows_per_block=[8] deterministic=True
# CHECK: softmax 4096x33 bf16 4 a block: ok {{.*}} rows_per_block=[4] deterministic=True
