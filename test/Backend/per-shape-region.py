# PerShapeRegion (python/fusec/torch_backend/per_shape.py), the wrapper of a region compiled per
# input shape, with stand-in compiles: one compile per shape, none past LIMIT shapes; a compile that
# raises, or a compiled kernel whose first call raises, sends that shape and every new one to the
# region's own graph (PyTorch), with a warning, and the model never sees the error.

# RUN: %python %s 2>&1 | FileCheck %s

import warnings

import torch
from fusec.torch_backend.per_shape import LIMIT, PerShapeRegion


def graph(x):
    return x + 1  # the region's own graph, what PyTorch runs


def make(first_call_fails=False, compile_fails_at=None):
    compiled = []

    def compile_shape(args):
        if len(compiled) == compile_fails_at:
            raise RuntimeError("no kernel for this one")
        compiled.append(tuple(args[0].shape))
        calls = []

        def kernel(x):
            calls.append(1)
            if first_call_fails and len(calls) == 1:
                raise RuntimeError("the runtime refused it")
            return x + 1

        return kernel

    return PerShapeRegion("fusec_shape_region_0", graph, compile_shape), compiled


# CHECK: limit: 8, compiles: 8, shapes run: 10, results right: True
region, compiled = make()
xs = [torch.randn(n) for n in range(1, LIMIT + 3)]
ok = all(torch.equal(region(x), x + 1) for x in xs + xs)
print(f"limit: {LIMIT}, compiles: {len(compiled)}, shapes run: {len(region.by_shape)}, results right: {ok}")

# CHECK: first call fails: result right: True, failures: ['RuntimeError: the runtime refused it'], compiles after: 1
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    region, compiled = make(first_call_fails=True)
    x = torch.randn(3)
    ok = torch.equal(region(x), x + 1) and torch.equal(region(x), x + 1) and torch.equal(region(torch.ones(5)), torch.ones(5) + 1)
print(f"first call fails: result right: {ok}, failures: {region.failures}, compiles after: {len(compiled)}")
# CHECK: warned: True
print("warned:", any("runs in PyTorch" in str(w.message) for w in caught))

# CHECK: compile fails: result right: True, compiled shapes: 1, failures: 1
with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    region, compiled = make(compile_fails_at=1)
    ok = all(torch.equal(region(x), x + 1) for x in [torch.randn(2), torch.randn(3), torch.randn(4)])
print(f"compile fails: result right: {ok}, compiled shapes: {region.shapes_compiled}, failures: {len(region.failures)}")
