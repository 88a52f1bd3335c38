# The row_stash knob on the GPU: hybrid row kernels (`vectors` past `row_registers`) that keep the
# part of each row past their registers in shared memory (python/fusec/codegen/row_stash.py) compute what eager
# computes, in float64: LayerNorm in fp32 and bf16 (one round of mean and variance), softmax (two
# reductions: the second reads the stash), a masked last slot (37 rows of 4000 bf16: 500 vectors
# over 128 threads), two streamed inputs (RMSNorm·SiLU·up's `up`, stashed too), add+RMSNorm (two
# inputs a reduction reads), with l2_evict_last, a row of one warp (no barrier between the phases:
# not stashed, LLVM would keep the values in registers anyway), and a stash too large for a block (64 KB of fp32:
# the kernel reads the rest again from memory, stash_bytes 0). Each line gives the stash's bytes
# and the PTX's shared-memory stores of 128 bits (the stash's; the reductions' scratch is 32-bit).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec
from fusec.bench_suite import rmsnorm_silu_mul, softmax_last as softmax

torch.manual_seed(0)


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def add_rmsnorm(x, residual, w):
    h = x + residual
    return h * torch.rsqrt(h.pow(2).mean(-1, keepdim=True) + 1e-6) * w, h


def case(name, fn, shapes, dtype=torch.float32, **knobs):
    args = [torch.randn(s, dtype=dtype) for s in shapes]
    compiled = fusec.compile(fn, tuple(args), tuning=False, row_stash=True, **knobs)
    stash = sum(s.get("stash_bytes", 0) for s in compiled.compilation.schedules)
    stores = compiled.compilation.ptx.count("st.shared.v4")
    got = compiled(*[a.cuda() for a in args])
    want = fn(*[a.double() for a in args])
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    close = all((g.double().cpu() - w).abs().max().item() <= tol * max(1.0, w.abs().max().item())
                for g, w in zip(got, want))
    print(f"{name}: stash {stash} bytes, {stores} shared stores, close: {close}")


# CHECK: layernorm: stash 8192 bytes, 8 shared stores, close: True
# CHECK: layernorm_bf16: stash 4096 bytes, 4 shared stores, close: True
# CHECK: softmax_bf16: stash 4096 bytes, 4 shared stores, close: True
# CHECK: masked_tail_bf16: stash 6144 bytes, 3 shared stores, close: True
# CHECK: rmsnorm_silu_mul_bf16: stash 8192 bytes, 8 shared stores, close: True
# CHECK: add_rmsnorm_bf16: stash 8192 bytes, 8 shared stores, close: True
# CHECK: layernorm_bf16_l2: stash 4096 bytes, 4 shared stores, close: True
# CHECK: one_warp: stash 0 bytes, 0 shared stores, close: True
# CHECK: too_large: stash 0 bytes, 0 shared stores, close: True
case("layernorm", layer_norm, [(300, 4096), (4096,), (4096,)], vectors=16)
case("layernorm_bf16", layer_norm, [(300, 4096), (4096,), (4096,)], torch.bfloat16, vectors=8)
case("softmax_bf16", softmax, [(300, 4096)], torch.bfloat16, vectors=8)
case("masked_tail_bf16", softmax, [(37, 4000)], torch.bfloat16, vectors=4, row_registers=8)
case("rmsnorm_silu_mul_bf16", rmsnorm_silu_mul, [(300, 4096), (4096,), (300, 4096)], torch.bfloat16, vectors=8)
case("add_rmsnorm_bf16", add_rmsnorm, [(300, 4096), (300, 4096), (4096,)], torch.bfloat16, vectors=8)
case("layernorm_bf16_l2", layer_norm, [(300, 4096), (4096,), (4096,)], torch.bfloat16, vectors=8, l2_evict_last=True)
case("one_warp", softmax, [(37, 1000)], torch.bfloat16, vectors=4, row_registers=8)
case("too_large", layer_norm, [(4, 32768), (32768,), (32768,)], vectors=16)
