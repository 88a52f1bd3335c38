# Matmuls on Hopper's tensor cores (the `wgmma` schedule, chosen for the inputs' GPU: sm_90a) against
# eager, at tile-multiple shapes of each tile width (N = 256, 128, 64), K of one trip and of
# many (the pipeline's prologue, its refills past the last trip), fp16 and bf16, nn.Linear's [N, K]
# weight; sizes that are not tile multiples (the tiles past M, N and K read zeros, store nothing:
# an M of 300 and of 1, an N of 1002 and 66, a K of 200 and 72) with a bias + GELU epilogue; and one
# matmul the schedule leaves to the loop lowering (B read along N). A product is
# compared in float32 with eager's float32 product of the same operands (same rounding of inputs).
# REQUIRES: cuda
# RUN: %python %s | FileCheck %s
# CHECK: 256x256x64 bf16: wgmma 128x128x64 ok
# CHECK: 8192x2048x256 bf16: wgmma 128x256x64 ok
# CHECK: 128x128x1024 fp16: wgmma 128x128x64 ok
# CHECK: 512x64x192 bf16: wgmma 128x64x64 ok
# CHECK: 2048x2048x2048 bf16: wgmma 128x128x64 ok
# CHECK: linear 256x384x512 bf16: wgmma 128x128x64 ok
# CHECK: x @ w 128x256x512 bf16: loops ok
# CHECK: gelu(a @ b.T + bias) 300x1002x200 bf16: wgmma 128x128x64 ok
# CHECK: 130x66x72 fp16: wgmma 128x128x64 ok
# CHECK: decode 1x4096x4096 bf16: wgmma 128x128x64 ok
# CHECK-NOT: WRONG
import torch

import fusec

torch.manual_seed(0)


def check(name, fn, *args):
    compiled = fusec.compile(fn, args)
    assert compiled.compilation.options.arch == "sm_90a", compiled.compilation.options.arch
    got = compiled(*args)
    want = fn(*(a.float() for a in args))
    err = ((got.float() - want).abs().max() / want.abs().max()).item()
    schedule = compiled.compilation.schedules[0]
    what = f"wgmma {schedule['tile']}" if schedule["schedule"] == "wgmma" else schedule["schedule"]
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
