# Dynamic rows on the GPU: a model compiled once with `dynamic_shapes` (dim 0 symbolic) runs on any
# row count, one PTX for all, and matches PyTorch eager at each (row kernels and flat kernels, fp32
# and bf16, a module with parameters); inputs whose rows disagree are refused before a launch.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec
from fusec.diagnostics import FusecError

torch.manual_seed(0)
ROWS = torch.export.Dim("rows", min=1, max=1 << 20)
COUNTS = (1, 2, 7, 8, 300, 4099)


def run(test):
    print(f"TEST: {test.__name__}")
    test()
    return test


def rmsnorm_silu_mul(x, w, up):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(h) * up


def check(fn, model, make, tol):
    for rows in COUNTS:
        args = [t.cuda() for t in make(rows)]
        torch.testing.assert_close(fn(*args), model(*args), rtol=tol, atol=tol)
    print("rows:", " ".join(map(str, COUNTS)), "close: True")


# CHECK-LABEL: TEST: rmsnorm_rows
# CHECK-NEXT:  symbols: ['rows'] kernels: 1 grid: ['rows', 1, 1]
# CHECK-NEXT:  rows: 1 2 7 8 300 4099 close: True
@run
def rmsnorm_rows():
    def make(rows):
        return torch.randn(rows, 4096), torch.randn(4096), torch.randn(rows, 4096)

    fn = fusec.compile(rmsnorm_silu_mul, make(8), dynamic_shapes=({0: ROWS}, None, {0: ROWS}))
    launch = fn.manifest["steps"][0]
    print("symbols:", fn.manifest["symbols"], "kernels:", len(fn.manifest["kernels"]), "grid:", launch["grid"])
    check(fn, rmsnorm_silu_mul, make, 1e-5)


# Two reductions per row (max, then sum), bf16 rows of 11008 (not a multiple of a block's vectors).
# CHECK-LABEL: TEST: softmax_bf16_rows
# CHECK-NEXT:  rows: 1 2 7 8 300 4099 close: True
@run
def softmax_bf16_rows():
    def make(rows):
        return (torch.randn(rows, 11008, dtype=torch.bfloat16),)

    def softmax(x):
        return torch.softmax(x, -1)

    fn = fusec.compile(softmax, make(8), dynamic_shapes=({0: ROWS},))
    check(fn, softmax, make, 1e-2)


# A flat (pointwise) kernel: its element count is a size argument, its last block guarded.
# CHECK-LABEL: TEST: gelu_bias_rows
# CHECK-NEXT:  scalar args: 1
# CHECK-NEXT:  rows: 1 2 7 8 300 4099 close: True
@run
def gelu_bias_rows():
    def make(rows):
        return torch.randn(rows, 5120), torch.randn(5120)

    def gelu_bias(x, b):
        return torch.nn.functional.gelu(x + b, approximate="tanh")

    fn = fusec.compile(gelu_bias, make(8), dynamic_shapes=({0: ROWS}, None))
    print("scalar args:", sum(a["kind"] == "scalar" for a in fn.manifest["steps"][0]["args"]))
    check(fn, gelu_bias, make, 1e-5)


# The same with two vectors per thread (the multi-vector flat schedule masks its last vectors).
# CHECK-LABEL: TEST: gelu_bias_rows_vectors
# CHECK-NEXT:  rows: 1 2 7 8 300 4099 close: True
@run
def gelu_bias_rows_vectors():
    def make(rows):
        return torch.randn(rows, 5120, dtype=torch.bfloat16), torch.randn(5120, dtype=torch.bfloat16)

    def gelu_bias(x, b):
        return torch.nn.functional.gelu(x + b, approximate="tanh")

    fn = fusec.compile(gelu_bias, make(8), dynamic_shapes=({0: ROWS}, None), vectors=2)
    check(fn, gelu_bias, make, 2e-2)


# A module: its weight and bias are static inputs after the rows.
# CHECK-LABEL: TEST: layernorm_module_rows
# CHECK-NEXT:  rows: 1 2 7 8 300 4099 close: True
@run
def layernorm_module_rows():
    norm = torch.nn.LayerNorm(4096).cuda()
    torch.nn.init.normal_(norm.weight)
    torch.nn.init.normal_(norm.bias)

    def make(rows):
        return (torch.randn(rows, 4096),)

    fn = fusec.compile(norm.cpu(), make(8), dynamic_shapes=({0: ROWS},))
    norm.cuda()
    check(fn, norm, make, 1e-4)


# A 3-d input with a dynamic batch: a kernel's rows are batch x 128 (the grid is an expression).
# CHECK-LABEL: TEST: batch_of_sequences
# CHECK-NEXT:  grid: [{'op': 'mul', 'args': ['rows', 128]}, 1, 1]
# CHECK-NEXT:  rows: 1 2 7 8 300 4099 close: True
@run
def batch_of_sequences():
    def make(rows):
        return (torch.randn(rows, 128, 1024),)

    def softmax(x):
        return torch.softmax(x, -1)

    fn = fusec.compile(softmax, make(8), dynamic_shapes=({0: ROWS},))
    print("grid:", fn.manifest["steps"][0]["grid"])
    check(fn, softmax, make, 1e-5)


# Inputs of one symbol must agree: refused, naming what was expected.
# CHECK-LABEL: TEST: rows_disagree
# CHECK-NEXT:  refused: error: input 2 is float32[7, 4096], the compiled model expects float32[rows=8, 4096]
@run
def rows_disagree():
    x, w, up = torch.randn(8, 4096), torch.randn(4096), torch.randn(8, 4096)
    fn = fusec.compile(rmsnorm_silu_mul, (x, w, up), dynamic_shapes=({0: ROWS}, None, {0: ROWS}))
    try:
        fn(x.cuda(), w.cuda(), up[:7].cuda())
    except FusecError as err:
        print("refused:", err)
