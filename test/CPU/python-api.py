# The Python API on the cpu target: fusec.compile(..., target="cpu") returns a callable on CPU
# tensors that matches eager, and the runtime checks the tensors it is given against the manifest
# (count, shape, dtype, device) before it runs anything.

# RUN: %python %s | FileCheck %s

import torch

import fusec


def run(test):
    print(f"TEST: {test.__name__}")
    test()
    return test


def bias_gelu(x, b):
    return torch.nn.functional.gelu(x + b)


# CHECK-LABEL: TEST: matches_eager
# CHECK-NEXT:  stages: torch linalg fused tiled llvm
# CHECK-NEXT:  ptx: None
# CHECK-NEXT:  function: True
# CHECK-NEXT:  layernorm: True
@run
def matches_eager():
    x, b = torch.randn(4, 64), torch.randn(64)
    fn = fusec.compile(bias_gelu, (x, b), target="cpu")
    print("stages:", " ".join(fn.stages))
    print("ptx:", fn.ptx)
    print("function:", torch.allclose(fn(x, b), bias_gelu(x, b), rtol=1e-5, atol=1e-5))
    norm = torch.nn.LayerNorm(64)
    with torch.no_grad():
        norm.weight.uniform_(0.5, 1.5)
        norm.bias.uniform_(-1, 1)
    fn = fusec.compile(norm, (x,), target="cpu")
    print("layernorm:", torch.allclose(fn(x), norm(x).detach(), rtol=1e-5, atol=1e-5))


# CHECK-LABEL: TEST: refuses_mismatched_tensors
# CHECK-NEXT:  FusecError: error: the model takes 2 input tensors, got 1
# CHECK-NEXT:  FusecError: error: input 0 is float32[4, 65], the compiled model expects float32[4, 64]
# CHECK-NEXT:  FusecError: error: input 1 is float64[64], the compiled model expects float32[64]
# CHECK-NEXT:  FusecError: error: input 1 is a float, not a tensor
# CHECK-NEXT:  FusecError: error: input 0 is on meta, the compiled model runs on cpu
@run
def refuses_mismatched_tensors():
    x, b = torch.randn(4, 64), torch.randn(64)
    fn = fusec.compile(bias_gelu, (x, b), target="cpu")
    attempts = [(x,), (torch.randn(4, 65), b), (x, b.double()), (x, 1.0), (x.to("meta"), b)]
    for args in attempts:
        try:
            fn(*args)
            print("no error")
        except fusec.FusecError as err:
            print(f"FusecError: {err}")


# CHECK-LABEL: TEST: unknown_target
# CHECK-NEXT:  FusecError: error: --target must be cuda or cpu, not 'tpu'
@run
def unknown_target():
    try:
        fusec.compile(bias_gelu, (torch.randn(4, 64), torch.randn(64)), target="tpu")
    except fusec.FusecError as err:
        print(f"FusecError: {err}")
