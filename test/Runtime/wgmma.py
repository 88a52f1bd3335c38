# Matmuls on Hopper's tensor cores (the `wgmma` schedule, chosen for the inputs' GPU: sm_90a) against
# eager, at tile-multiple shapes of each tile width (N = 256, 128, 64), K of one trip and of many
# (the pipeline's prologue, its refills past the last trip), fp16 and bf16, nn.Linear's [N, K]
# weight, and a weight [K, N] (`x @ w`: a copy transposed to [N, K] first); sizes that are not tile
# multiples (the tiles past M, N and K read zeros, store nothing: an M of 300 and of 1, an N of 1002
# and 66, a K of 200 and 72) with a bias + GELU epilogue; and the knobs: persistent grids (blocks
# taking several tiles, a tile's copies running into the next's, tails, K of 2 trips with 4 in
# flight), 3 and 6 stages, 64-wide tiles. A product is compared in float32 with eager's float32
# product of the same operands (same rounding of inputs).
# REQUIRES: cuda
# RUN: %python %s | FileCheck %s
# CHECK: 256x256x64 bf16: wgmma 128x128x64 ok
# CHECK: 8192x2048x256 bf16: wgmma 128x256x64 ok
# CHECK: 128x128x1024 fp16: wgmma 128x128x64 ok
# CHECK: 512x64x192 bf16: wgmma 128x64x64 ok
# CHECK: 2048x2048x2048 bf16: wgmma 128x128x64 ok
# CHECK: linear 256x384x512 bf16: wgmma 128x128x64 ok
# CHECK: x @ w 128x256x512 bf16: wgmma 128x128x64 ok
# CHECK: gelu(a @ b.T + bias) 300x1002x200 bf16: wgmma 128x128x64 ok
# CHECK: 130x66x72 fp16: wgmma 128x128x64 ok
# CHECK: decode 1x4096x4096 bf16: wgmma 128x128x64 ok
# CHECK: persistent gelu(a @ b.T + bias) 2000x3000x1000: wgmma 128x128x64 4 stages, 132 blocks ok
# CHECK: persistent 2 an SM gelu(a @ b.T + bias) 2000x3000x1000: wgmma 128x128x64 3 stages, 264 blocks ok
# CHECK: persistent 4100x1000x72: wgmma 128x64x64 6 stages, 132 blocks ok
# CHECK: persistent 4096x4096x64: wgmma 128x256x64 4 stages, 132 blocks ok
# CHECK-NOT: WRONG
import torch

import fusec

torch.manual_seed(0)


def check(name, fn, *args, knobs=""):
    """`knobs`: the matmul kernel's (group 0's) schedule knobs, KNOB=VALUE,..."""
    schedule = ",".join(f"0.{kv}" for kv in knobs.split(",")) if knobs else ""
    compiled = fusec.compile(fn, args, schedule=schedule, wgmma=True)
    assert compiled.compilation.options.arch == "sm_90a", compiled.compilation.options.arch
    got = compiled(*args)
    want = fn(*(a.float() for a in args))
    err = ((got.float() - want).abs().max() / want.abs().max()).item()
    schedules = compiled.compilation.schedules
    schedule = next((s for s in schedules if s["schedule"] == "wgmma"), schedules[0])
    what = f"wgmma {schedule['tile']}" if schedule["schedule"] == "wgmma" else schedule["schedule"]
    if "blocks" in schedule:
        what += f" {schedule['stages']} stages, {schedule['blocks']} blocks"
    print(f"{name}: {what} {'ok' if err < 1e-2 else 'WRONG'} ({err:.1e})", flush=True)


def mm_t(a, b):
    return (a @ b.T).float()


for m, n, k, dtype in ((256, 256, 64, torch.bfloat16), (8192, 2048, 256, torch.bfloat16),
                       (128, 128, 1024, torch.float16), (512, 64, 192, torch.bfloat16),
                       (2048, 2048, 2048, torch.bfloat16)):
    a = torch.randn(m, k, device="cuda", dtype=dtype)
    b = torch.randn(n, k, device="cuda", dtype=dtype)
    check(f"{m}x{n}x{k} {'bf16' if dtype == torch.bfloat16 else 'fp16'}", mm_t, a, b)

linear = torch.nn.Linear(512, 384, bias=False).cuda().to(torch.bfloat16)
x = torch.randn(256, 512, device="cuda", dtype=torch.bfloat16)
check("linear 256x384x512 bf16", lambda x, w: (x @ w.T).float(), x, linear.weight.detach())
w = torch.randn(512, 256, device="cuda", dtype=torch.bfloat16)
check("x @ w 128x256x512 bf16", lambda x, w: (x @ w).float(), x[:128].contiguous(), w)


def gelu_bias(a, b, bias):
    return torch.nn.functional.gelu(a @ b.T + bias).float()


bf = dict(device="cuda", dtype=torch.bfloat16)
check("gelu(a @ b.T + bias) 300x1002x200 bf16", gelu_bias, torch.randn(300, 200, **bf), torch.randn(1002, 200, **bf),
      torch.randn(1002, **bf))
check("130x66x72 fp16", mm_t, torch.randn(130, 72, device="cuda", dtype=torch.float16),
      torch.randn(66, 72, device="cuda", dtype=torch.float16))
check("decode 1x4096x4096 bf16", mm_t, torch.randn(1, 4096, **bf), torch.randn(4096, 4096, **bf) / 64)

# The tuner's knobs: a persistent grid (a block takes tile after tile, the next tile's copies in flight
# during the epilogue; blocks with fewer tiles than others), two blocks an SM, fewer stages than trips.
a, b, bias = torch.randn(2000, 1000, **bf), torch.randn(3000, 1000, **bf) / 32, torch.randn(3000, **bf)
check("persistent gelu(a @ b.T + bias) 2000x3000x1000", gelu_bias, a, b, bias, knobs="mma_persistent=1")
check("persistent 2 an SM gelu(a @ b.T + bias) 2000x3000x1000", gelu_bias, a, b, bias,
      knobs="mma_tile_n=128,mma_stages=3,mma_persistent=2")
check("persistent 4100x1000x72", gelu_bias, torch.randn(4100, 72, **bf), torch.randn(1000, 72, **bf),
      torch.randn(1000, **bf), knobs="mma_tile_n=64,mma_stages=6,mma_persistent=1")  # 2 trips, 4 ahead
check("persistent 4096x4096x64", mm_t, torch.randn(4096, 64, **bf), torch.randn(4096, 64, **bf),
      knobs="mma_tile_n=256,mma_stages=4,mma_persistent=1")
