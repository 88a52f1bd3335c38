# Dynamic rows on the cpu target (the numerics check that needs no GPU): a model compiled once with
# `dynamic_shapes` (dim 0 symbolic) runs on any row count and matches PyTorch eager at each: row
# kernels (one and two reductions), a flat kernel, bf16, a module with parameters. Each kernel gets a
# dynamic buffer as a static pointer plus its row count (fusec-outline-groups-to-functions).

# RUN: %python %s | FileCheck %s

import torch

import fusec

torch.manual_seed(0)
ROWS = torch.export.Dim("rows", min=1, max=1 << 20)
COUNTS = (1, 2, 7, 33)


def run(test):
    print(f"TEST: {test.__name__}")
    test()
    return test


def check(fn, model, make, tol):
    for rows in COUNTS:
        args = make(rows)
        torch.testing.assert_close(fn(*args), model(*args), rtol=tol, atol=tol)
    print("rows:", " ".join(map(str, COUNTS)), "close: True")


def rmsnorm_silu_mul(x, w, up):
    h = x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w
    return torch.nn.functional.silu(h) * up


# CHECK-LABEL: TEST: rmsnorm_rows
# CHECK-NEXT:  symbols: ['rows'] first kernel's size arguments: ['rows', 'rows', 'rows', 'rows']
# CHECK-NEXT:  rows: 1 2 7 33 close: True
@run
def rmsnorm_rows():
    def make(rows):
        return torch.randn(rows, 512), torch.randn(512), torch.randn(rows, 512)

    fn = fusec.compile(rmsnorm_silu_mul, make(8), dynamic_shapes=({0: ROWS}, None, {0: ROWS}), target="cpu")
    sizes = [a["value"] for a in fn.manifest["steps"][0]["args"] if a["kind"] == "scalar"]
    print("symbols:", fn.manifest["symbols"], "first kernel's size arguments:", sizes)
    check(fn, rmsnorm_silu_mul, make, 1e-5)


# CHECK-LABEL: TEST: softmax_bf16_rows
# CHECK-NEXT:  rows: 1 2 7 33 close: True
@run
def softmax_bf16_rows():
    def make(rows):
        return (torch.randn(rows, 300, dtype=torch.bfloat16),)

    def softmax(x):
        return torch.softmax(x, -1)

    fn = fusec.compile(softmax, make(8), dynamic_shapes=({0: ROWS},), target="cpu")
    check(fn, softmax, make, 1e-2)


# CHECK-LABEL: TEST: gelu_bias_rows
# CHECK-NEXT:  rows: 1 2 7 33 close: True
@run
def gelu_bias_rows():
    def make(rows):
        return torch.randn(rows, 320), torch.randn(320)

    def gelu_bias(x, b):
        return torch.nn.functional.gelu(x + b, approximate="tanh")

    fn = fusec.compile(gelu_bias, make(8), dynamic_shapes=({0: ROWS}, None), target="cpu")
    check(fn, gelu_bias, make, 1e-5)


# CHECK-LABEL: TEST: layernorm_module_rows
# CHECK-NEXT:  rows: 1 2 7 33 close: True
@run
def layernorm_module_rows():
    norm = torch.nn.LayerNorm(256)
    torch.nn.init.normal_(norm.weight)
    torch.nn.init.normal_(norm.bias)

    def make(rows):
        return (torch.randn(rows, 256),)

    fn = fusec.compile(norm, make(8), dynamic_shapes=({0: ROWS},), target="cpu")
    with torch.no_grad():
        check(fn, norm, make, 1e-4)


# A 3-d input with a dynamic batch: the rows of a kernel are batch x 16.
# CHECK-LABEL: TEST: batch_of_sequences
# CHECK-NEXT:  rows: 1 2 7 33 close: True
@run
def batch_of_sequences():
    def make(rows):
        return (torch.randn(rows, 16, 64),)

    def softmax(x):
        return torch.softmax(x, -1)

    fn = fusec.compile(softmax, make(4), dynamic_shapes=({0: ROWS},), target="cpu")
    check(fn, softmax, make, 1e-5)


# The Dim's range is the model's contract (torch.export compiled it for those sizes): the manifest
# records it, and a call outside it is refused, naming the input and the range. Without a min, 0
# rows is a valid call: the launches are skipped and the outputs are empty.
# CHECK-LABEL: TEST: bounded_rows
# CHECK-NEXT:  bounds: {'rows': [4, 64]}
# CHECK-NEXT:  4 rows: [4, 32]
# CHECK-NEXT:  error: input 0 has rows=3: the model's Dim 'rows' allows 4 to 64
# CHECK-NEXT:  error: input 0 has rows=65: the model's Dim 'rows' allows 4 to 64
# CHECK-NEXT:  unbounded, bounds in the manifest: False 0 rows: [0, 32]
@run
def bounded_rows():
    def softmax(x):
        return torch.softmax(x, -1)

    fn = fusec.compile(softmax, (torch.randn(8, 32),), dynamic_shapes=({0: torch.export.Dim("rows", min=4, max=64)},),
                       target="cpu")
    print("bounds:", fn.manifest["bounds"])
    print("4 rows:", list(fn(torch.randn(4, 32)).shape))
    for rows in (3, 65):
        try:
            fn(torch.randn(rows, 32))
        except fusec.FusecError as err:
            print(err)
    free = fusec.compile(softmax, (torch.randn(8, 32),), dynamic_shapes=({0: torch.export.Dim("rows")},), target="cpu")
    print("unbounded, bounds in the manifest:", "bounds" in free.manifest, "0 rows:", list(free(torch.zeros(0, 32)).shape))
