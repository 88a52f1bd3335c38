# A region fusec compiles to no kernel launch (its outputs are its inputs, or copies of them) stays in
# PyTorch, and the report counts it there: a fusec region is one that launches a kernel (issue 23:
# "Regions with zero kernels are reported as fusec regions"). A region with a kernel beside it is
# still one fusec region. CPU tensors: the cpu target.

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch


def check(fn, *args):
    want = fn(*args)
    got = torch.compile(fn, backend="fusec")(*args)
    report = tb.reports[-1]
    # within 1e-6: the cpu target's exp (libm) and eager's (vectorized) can differ in the last bit
    print("matches eager:", torch.allclose(got, want, rtol=1e-6, atol=0.0), "strides:", got.stride() == want.stride())
    print(report.summary())
    for r in report.regions:
        print(f"{r.name}: {r.status}, kernels {r.kernels}: {r.reason}")


# where(c, x, x) folds to x: no kernel.
# CHECK-LABEL: TEST: where_same_branches
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 2 ATen ops -> 0 fusec regions, 2 ops in PyTorch
# CHECK-NEXT:  fusec_region_0: pytorch, kernels []: fusec compiles it to no kernel (its outputs are its inputs or copies of them): PyTorch runs it
@run
def where_same_branches():
    check(lambda x: torch.where(x > 0, x, x), torch.randn(4, 4))


# A transpose made contiguous: a copy, no arithmetic.
# CHECK-LABEL: TEST: contiguous_transpose
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 0 fusec regions, {{[0-9]+}} ops in PyTorch
# CHECK-NEXT:  fusec_region_0: pytorch, kernels []: fusec compiles it to no kernel
@run
def contiguous_transpose():
    check(lambda x: x.t().contiguous(), torch.randn(4, 6))


# Arithmetic: one region, one kernel, counted.
# CHECK-LABEL: TEST: with_a_kernel
# CHECK-NEXT:  matches eager: True strides: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 2 ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK-NEXT:  fusec_region_0: compiled, kernels ['main_kernel_0']:
@run
def with_a_kernel():
    check(lambda x: torch.exp(x) + 1, torch.randn(4, 4))
