# The read_only_cache knob on the GPU: kernels whose inputs are loaded through the read-only data
# cache (ld.global.nc, from `noalias readonly` kernel arguments) compute what eager computes, in
# float64, for each setting: a row kernel with weights (LayerNorm), one with a second streamed input
# (RMSNorm·SiLU·up), a flat kernel with a bias, a masked tail, and one tensor passed as two inputs
# (read-only arguments that alias each other are allowed).

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


def case(name, fn, shapes, setting):
    args = [torch.randn(s) for s in shapes]
    if name == "aliased":
        args = [args[0], args[0], args[2]]
    compiled = fusec.compile(fn, tuple(args), tuning=False, read_only_cache=setting)
    nc = compiled.compilation.ptx.count("ld.global.nc.")
    got = compiled(*[a.cuda() for a in args]).double().cpu()
    want = fn(*[a.double() for a in args])
    err = (got - want).abs().max().item()
    print(f"{name} {setting}: nc loads {nc} close: {err <= 1e-4 * max(1.0, want.abs().max().item())}")


# CHECK: layernorm off: nc loads 0 close: True
# CHECK: layernorm weights: nc loads 8 close: True
# CHECK: layernorm inputs: nc loads 12 close: True
# CHECK: rmsnorm_silu_mul off: nc loads 0 close: True
# CHECK: rmsnorm_silu_mul weights: nc loads 4 close: True
# CHECK: rmsnorm_silu_mul inputs: nc loads 12 close: True
# CHECK: gelu_bias off: nc loads 0 close: True
# CHECK: gelu_bias weights: nc loads 1 close: True
# CHECK: gelu_bias inputs: nc loads 2 close: True
# CHECK: masked_tail off: nc loads 0 close: True
# CHECK: masked_tail weights: nc loads 2 close: True
# CHECK: masked_tail inputs: nc loads 3 close: True
# CHECK: aliased off: nc loads 0 close: True
# CHECK: aliased weights: nc loads 0 close: True
# CHECK: aliased inputs: nc loads 8 close: True
for setting in ("off", "weights", "inputs"):
    case("layernorm", layer_norm, [(300, 4096), (4096,), (4096,)], setting)
for setting in ("off", "weights", "inputs"):
    case("rmsnorm_silu_mul", rmsnorm_silu_mul, [(300, 4096), (4096,), (300, 4096)], setting)
for setting in ("off", "weights", "inputs"):
    case("gelu_bias", gelu_bias, [(300, 4096), (4096,)], setting)
for setting in ("off", "weights", "inputs"):
    case("masked_tail", layer_norm, [(7, 100), (100,), (100,)], setting)
for setting in ("off", "weights", "inputs"):
    case("aliased", rmsnorm_silu_mul, [(300, 4096), (4096,), (300, 4096)], setting)
