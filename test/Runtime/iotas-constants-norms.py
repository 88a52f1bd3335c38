# On the GPU, against CUDA eager: T5's relative position buckets (one kernel, exact), arange * x
# fused (one kernel), factories and constant tensors read by the kernels, integer edge cases
# (floor_divide/remainder of negative operands, the most negative int64 by -1, quotients past 2^24),
# GroupNorm(32, 512) on 32x512x64x64 (it did not compile for the GPU: host op 'memref.get_global')
# and eval BatchNorm2d on 64x256x64x64 (it was refused: cf.assert). Floats within fusec's tolerance
# of eager in float64, integers exact.

# REQUIRES: cuda
# RUN: %python %s %S/../CPU/Inputs | FileCheck %s

import copy
import importlib.util
import os
import sys

import torch

import fusec
from fusec.numerics import compare

torch.manual_seed(0)
inputs_dir = sys.argv[1]


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(inputs_dir, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(label, model, inputs, kernels=None):
    fn = fusec.compile(model, inputs)
    outs = fn(*inputs)
    outs = outs if isinstance(outs, tuple) else (outs,)
    wide = tuple(t.double() if t.is_floating_point() else t for t in inputs)
    reference = copy.deepcopy(model).double() if isinstance(model, torch.nn.Module) else model
    with torch.no_grad():
        refs = reference(*wide)
    refs = refs if isinstance(refs, tuple) else (refs,)
    bad = []
    for i, (out, ref) in enumerate(zip(outs, refs)):
        ref = ref.to(out.dtype) if ref.is_floating_point() and not out.is_floating_point() else ref
        max_abs, _, tol = compare(out, ref)
        if max_abs > tol:
            bad.append(f"output {i}: max abs err {max_abs:.3e} > {tol:.3e}")
    n = len(fn.manifest["kernels"])
    if kernels is not None and n != kernels:
        bad.append(f"{n} kernels, expected {kernels}")
    print(f"{label}: {n} kernel{'s' if n != 1 else ''}, {'ok' if not bad else 'WRONG ' + '; '.join(bad)}")


cuda = torch.device("cuda")
t5 = load("t5_buckets")
check("t5 buckets", t5.model, (torch.tensor(37, device=cuda),), kernels=1)
# CHECK: t5 buckets: 1 kernel, ok

check("arange * x", load("arange_scale").model, (torch.randn(4096, 1000, device=cuda),), kernels=1)
# CHECK: arange * x: 1 kernel, ok

factories = load("factories")
check("factories", factories.model, tuple(t.to(cuda) for t in factories.example_inputs))
# CHECK: factories: {{[0-9]+ kernels?}}, ok

integers = load("integer_ops")
check("integer ops", integers.model, tuple(t.to(cuda) for t in integers.example_inputs))
# CHECK: integer ops: {{[0-9]+ kernels?}}, ok

group = torch.nn.GroupNorm(32, 512).to(cuda)
with torch.no_grad():
    group.weight.uniform_(-1, 1)
    group.bias.uniform_(-1, 1)
check("group norm", group, (torch.randn(32, 512, 64, 64, device=cuda),))
# CHECK: group norm: {{[0-9]+ kernels?}}, ok

batch = torch.nn.BatchNorm2d(256).to(cuda)
with torch.no_grad():
    batch.weight.uniform_(-1, 1)
    batch.bias.uniform_(-1, 1)
    batch.running_mean.uniform_(-1, 1)
    batch.running_var.uniform_(0.5, 2)
check("batch norm eval", batch.eval(), (torch.randn(64, 256, 64, 64, device=cuda),))
# CHECK: batch norm eval: {{[0-9]+ kernels?}}, ok
