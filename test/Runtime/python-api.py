# The Python API on the GPU: fusec.compile(model, example_inputs) returns a callable that runs on
# CUDA tensors and matches PyTorch eager (torch.testing.assert_close).

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)


def run(test):
    print(f"TEST: {test.__name__}")
    test()
    return test


def rmsnorm_silu_mul(x, w, up):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(h) * up


# CHECK-LABEL: TEST: seed_function
# CHECK-NEXT:  kernels: 1
# CHECK-NEXT:  close: True
@run
def seed_function():
    x, w, up = torch.randn(8, 4096), torch.randn(4096), torch.randn(8, 4096)
    fn = fusec.compile(rmsnorm_silu_mul, (x, w, up))
    print("kernels:", len(fn.manifest["kernels"]))
    x, w, up = x.cuda(), w.cuda(), up.cuda()
    torch.testing.assert_close(fn(x, w, up), rmsnorm_silu_mul(x, w, up), rtol=1e-5, atol=1e-5)
    print("close: True")


# Called again with other inputs of the same shapes: the compiled kernels are reused.
# CHECK-LABEL: TEST: new_inputs
# CHECK-NEXT:  close: True
@run
def new_inputs():
    shapes = [(8, 4096), (4096,), (8, 4096)]
    fn = fusec.compile(rmsnorm_silu_mul, tuple(torch.randn(s) for s in shapes))
    for _ in range(3):
        args = tuple(torch.randn(s, device="cuda") for s in shapes)
        torch.testing.assert_close(fn(*args), rmsnorm_silu_mul(*args), rtol=1e-5, atol=1e-5)
    print("close: True")


# An nn.Module: its weight and bias are passed by the compiled model itself.
# CHECK-LABEL: TEST: layernorm_module
# CHECK-NEXT:  close: True
@run
def layernorm_module():
    model = torch.nn.LayerNorm(1024)
    with torch.no_grad():
        model.weight.normal_()
        model.bias.normal_()
    x = torch.randn(16, 1024)
    fn = fusec.compile(model, (x,))
    x = x.cuda()
    with torch.no_grad():
        ref = model.cuda()(x)
    torch.testing.assert_close(fn(x), ref, rtol=1e-5, atol=1e-5)
    print("close: True")


# CHECK-LABEL: TEST: softmax_bf16
# CHECK-NEXT:  dtype: torch.bfloat16
# CHECK-NEXT:  close: True
@run
def softmax_bf16():
    x = torch.randn(8, 4096, dtype=torch.bfloat16)
    fn = fusec.compile(lambda t: torch.softmax(t, dim=-1), (x,))
    x = x.cuda()
    out = fn(x)
    print("dtype:", out.dtype)
    torch.testing.assert_close(out, torch.softmax(x, dim=-1))
    print("close: True")


# CHECK-LABEL: TEST: threads_per_block_option
# CHECK-NEXT:  block: [128, 1, 1]
# CHECK-NEXT:  close: True
@run
def threads_per_block_option():
    x, b = torch.randn(37, 1001), torch.randn(1001)
    fn = fusec.compile(lambda x, b: torch.nn.functional.gelu(x + b), (x, b), threads_per_block=128)
    print("block:", fn.manifest["steps"][0]["block"])
    x, b = x.cuda(), b.cuda()
    torch.testing.assert_close(fn(x, b), torch.nn.functional.gelu(x + b), rtol=1e-5, atol=1e-5)
    print("close: True")


# Inputs of another shape than compiled for are an error, not a wrong answer.
# CHECK-LABEL: TEST: wrong_shape
# CHECK-NEXT:  FusecError: error: input 0 is float32[4, 32], the compiled model expects float32[4, 64]
@run
def wrong_shape():
    fn = fusec.compile(lambda t: t * 2, (torch.randn(4, 64),))
    try:
        fn(torch.randn(4, 32, device="cuda"))
        print("no error")
    except fusec.FusecError as err:
        print(f"FusecError: {err}")
