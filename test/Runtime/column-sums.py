# Column sums on the GPU (`x.sum(0)`, `x.mean(0)`, a bias gradient `g.sum(dim=(0, 1))`): the columns
# schedule (a thread per vector of adjacent outputs, summing down the rows, coalesced loads) after
# --fusec-split-column-sums made partial column sums over blocks of rows, then their sum. The
# "sliced" cases compile with `column_slices=0` (the heuristic; the default is 1): the warps of a
# block split each column's rows (combined in shared memory, rows past the end masked: 77 or 1000
# rows, odd widths, a max, a variance, a forced 32 slices), and the split makes fewer partials. Each
# result is compared with float64 eager: fp32 outputs within 2e-6 of the largest |result| (the
# order of the adds is fixed: no atomics), bf16 outputs within one bf16 rounding step of the float64
# value (2**-8 relative, the rounding of the fp32 sum on the way). The same compile twice gives
# bitwise the same result (deterministic).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)


def column_sum(x):
    return x.sum(0)


def column_mean(x):
    return x.mean(0)


def bias_grad(g):
    return g.sum(dim=(0, 1))


# Other column reductions the columns schedule now takes (not split): a max, a variance (its mean is
# read back, so neither sum is split), and a mean read back over the tensor.
def column_max(x):
    return x.amax(0)


def column_var(x):
    return x.var(0)


def centered(x):
    return x - x.mean(0)


cases = [
    ("sum(0) 32768x4096 fp32", column_sum, (32768, 4096), torch.float32),
    ("sum(0) 32768x4096 bf16", column_sum, (32768, 4096), torch.bfloat16),
    ("mean(0) 32768x4096 fp32", column_mean, (32768, 4096), torch.float32),
    ("mean(0) 4096x4096 bf16", column_mean, (4096, 4096), torch.bfloat16),
    ("sum(0, 1) 64x512x768 fp32", bias_grad, (64, 512, 768), torch.float32),
    ("sum(0, 1) 64x512x768 bf16", bias_grad, (64, 512, 768), torch.bfloat16),
    ("sum(0) 3000x1001 fp32", column_sum, (3000, 1001), torch.float32),
    ("sum(0) 8x4096 fp32", column_sum, (8, 4096), torch.float32),
    ("sum(0) 1x4096 fp32", column_sum, (1, 4096), torch.float32),
    ("sum(0) 5x7 fp32", column_sum, (5, 7), torch.float32),
    ("sum(0) 100000x64 fp32", column_sum, (100000, 64), torch.float32),
    ("amax(0) 4096x4096 fp32", column_max, (4096, 4096), torch.float32),
    ("var(0) 4096x1024 fp32", column_var, (4096, 1024), torch.float32),
    ("x - mean(0) 2048x1024 fp32", centered, (2048, 1024), torch.float32),
    ("sliced sum(0) 32768x4096 fp32", column_sum, (32768, 4096), torch.float32, {"column_slices": 0}),
    ("sliced sum(0) 32768x3072 bf16", column_sum, (32768, 3072), torch.bfloat16, {"column_slices": 0}),
    ("sliced sum(0) 77x4096 fp32", column_sum, (77, 4096), torch.float32, {"column_slices": 0}),
    ("sliced sum(0) 1000x1001 bf16", column_sum, (1000, 1001), torch.bfloat16, {"column_slices": 0}),
    ("sliced amax(0) 256x1000 bf16", column_max, (256, 1000), torch.bfloat16, {"column_slices": 0}),
    ("sliced var(0) 300x768 fp32", column_var, (300, 768), torch.float32, {"column_slices": 0}),
    ("sliced sum(0, 1) 32x197x768 bf16", bias_grad, (32, 197, 768), torch.bfloat16, {"column_slices": 0}),
    ("sliced sum(0, 1) 16x4096x1024 fp32", bias_grad, (16, 4096, 1024), torch.float32, {"column_slices": 0}),
    ("sum(0) 1000x1000 fp32, 32 slices", column_sum, (1000, 1000), torch.float32, {"column_slices": 32}),
]
for name, fn, shape, dtype, *knobs in cases:
    x = torch.randn(shape, device="cuda").to(dtype)
    compiled = fusec.compile(fn, (x,), **(knobs[0] if knobs else {}))
    got = compiled(x)
    again = compiled(x)
    ref = fn(x.double())
    if dtype == torch.float32:
        err = float((got.double() - ref).abs().max() / ref.abs().max().clamp_min(1e-30))
        ok = got.dtype == torch.float32 and err < 2e-6
    else:
        # One bf16 step of the float64 value (2**-8 relative; the fp32 sum may round either way),
        # plus what the fp32 sum itself can be off by, relative to the largest result.
        bound = ref.abs() * 2.0 ** -8 + 2e-6 * ref.abs().max()
        err = float(((got.double() - ref).abs() / bound).max())
        ok = got.dtype == torch.bfloat16 and err <= 1.0
    same = torch.equal(got, again)
    launches = [s["grid"][0] for s in compiled.manifest["steps"] if s["op"] == "launch"]
    print(f"{name}: {'ok' if ok and same else 'WRONG'} (error {err:.2e}{'' if same else ', NOT DETERMINISTIC'}; "
          f"grids {launches})")
# CHECK-NOT: WRONG
# CHECK: sum(0) 32768x4096 fp32: ok
# CHECK: sum(0) 32768x4096 bf16: ok
# CHECK: mean(0) 32768x4096 fp32: ok
# CHECK: mean(0) 4096x4096 bf16: ok
# CHECK: sum(0, 1) 64x512x768 fp32: ok
# CHECK: sum(0, 1) 64x512x768 bf16: ok
# CHECK: sum(0) 3000x1001 fp32: ok
# CHECK: sum(0) 8x4096 fp32: ok
# CHECK: sum(0) 1x4096 fp32: ok
# CHECK: sum(0) 5x7 fp32: ok
# CHECK: sum(0) 100000x64 fp32: ok
# CHECK: amax(0) 4096x4096 fp32: ok
# CHECK: var(0) 4096x1024 fp32: ok
# CHECK: x - mean(0) 2048x1024 fp32: ok
# CHECK: sliced sum(0) 32768x4096 fp32: ok
# CHECK: sliced sum(0) 32768x3072 bf16: ok
# CHECK: sliced sum(0) 77x4096 fp32: ok
# CHECK: sliced sum(0) 1000x1001 bf16: ok
# CHECK: sliced amax(0) 256x1000 bf16: ok
# CHECK: sliced var(0) 300x768 fp32: ok
# CHECK: sliced sum(0, 1) 32x197x768 bf16: ok
# CHECK: sliced sum(0, 1) 16x4096x1024 fp32: ok
# CHECK: sum(0) 1000x1000 fp32, 32 slices: ok
