# The l2_evict_last knob on the GPU: kernels that load their rows as inline PTX with an L2
# evict_last cache policy (passes/l2_evict_last.py) compute what eager computes, in float64: a row
# kernel (LayerNorm, 128-bit loads), a second streamed input (RMSNorm·SiLU·up), a flat kernel, odd
# widths (two hinted loads: the row's aligned body and its head and tail, an element a load), bf16 rows, and the knob with
# read_only_cache=inputs (ld.global.nc with the policy).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)


def layer_norm(x, w, b):
    return torch.nn.functional.layer_norm(x, x.shape[-1:], w, b, 1e-5)


def rmsnorm_silu_mul(x, w, up):
    normed = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(normed) * up


def gelu_bias(x, b):
    return torch.nn.functional.gelu(x + b, approximate="tanh")


def softmax(x):
    return torch.softmax(x, dim=-1)


def case(name, fn, shapes, dtype=torch.float32, **knobs):
    args = [torch.randn(s, dtype=dtype) for s in shapes]
    compiled = fusec.compile(fn, tuple(args), tuning=False, l2_evict_last=True, **knobs)
    ptx = compiled.compilation.ptx
    hinted = ptx.count("L2::cache_hint")
    nc = ptx.count(".nc.L2::cache_hint")
    assert ptx.count("createpolicy.fractional.L2::evict_last") == 1, ptx
    got = compiled(*[a.cuda() for a in args]).double().cpu()
    want = fn(*[a.double() for a in args])
    tol = 1e-4 if dtype == torch.float32 else 2e-2
    err = (got - want).abs().max().item()
    print(f"{name}: hinted loads {hinted} nc {nc} close: {err <= tol * max(1.0, want.abs().max().item())}")


# CHECK: layernorm: hinted loads 4 nc 0 close: True
# CHECK: layernorm_v2: hinted loads 2 nc 0 close: True
# CHECK: rmsnorm_silu_mul: hinted loads 8 nc 0 close: True
# CHECK: gelu_bias: hinted loads 1 nc 0 close: True
# CHECK: odd_width: hinted loads 2 nc 0 close: True
# CHECK: odd_width_bf16: hinted loads 2 nc 0 close: True
# CHECK: softmax_bf16: hinted loads 2 nc 0 close: True
# CHECK: layernorm_read_only: hinted loads 4 nc 4 close: True
case("layernorm", layer_norm, [(300, 4096), (4096,), (4096,)])
case("layernorm_v2", layer_norm, [(300, 4096), (4096,), (4096,)], vectors=2)
case("rmsnorm_silu_mul", rmsnorm_silu_mul, [(300, 4096), (4096,), (300, 4096)])
case("gelu_bias", gelu_bias, [(300, 4096), (4096,)])
case("odd_width", layer_norm, [(7, 101), (101,), (101,)])
case("odd_width_bf16", layer_norm, [(7, 101), (101,), (101,)], torch.bfloat16)
case("softmax_bf16", softmax, [(300, 4096)], torch.bfloat16, vectors=2)
case("layernorm_read_only", layer_norm, [(300, 4096), (4096,), (4096,)], read_only_cache="inputs")
