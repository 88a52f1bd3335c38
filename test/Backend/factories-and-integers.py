# torch.compile(backend="fusec") on the CPU takes the ops that compile inside kernels now: factories
# (arange, full_like, zeros_like, new_ones, scalar_tensor) ride inside a region that computes with
# them; integer and bitwise arithmetic, floor_divide, remainder, cos/sin; GroupNorm and eval
# BatchNorm (one kernel). What reads no input at all (T5's buckets over static sizes) is computed once
# when the graph is compiled.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "CPU", "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch
from t5_buckets import _relative_position_bucket


def regions():
    report = tb.reports[-1]
    return [" ".join(ops) for ops in report.regions.values()] if hasattr(report, "regions") else []


# CHECK-LABEL: TEST: factories
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  full_like, where, zeros_like, add, new_ones, scalar_tensor, mul, add, _softmax -> main_kernel_0
# CHECK-NEXT:    once    arange x2, gt, sub, unsqueeze x2: constants (no input reaches them), computed at compile time
@run
def factories():
    def fn(x):
        positions = torch.arange(x.shape[-1])[None, :] - torch.arange(x.shape[0])[:, None]
        return (torch.where(positions > 0, torch.full_like(x, float("-inf")), x) + torch.zeros_like(x)
                + x.new_ones(x.shape) * torch.scalar_tensor(0.5)).softmax(-1)

    x = torch.randn(16, 64)
    with torch.no_grad():
        print("matches eager:", close(torch.compile(fn, backend="fusec")(x), fn(x)))
    print(tb.reports[-1])


# CHECK-LABEL: TEST: integers
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> {{[0-9]+}} fusec region{{s?}} ({{[0-9]+}} kernel{{s?}}, cpu), 0 ops in PyTorch
@run
def integers():
    def fn(i, j, x):
        return ((torch.abs(i) & 255) | (i ^ j) | ~j) + torch.floor_divide(i, j) + torch.remainder(i, j), \
            torch.where(i > j, torch.cos(x), torch.sin(x))

    i = torch.tensor([7, -7, 7, -7, -2**63, 2**40 + 1] * 4).view(4, 6)
    j = torch.tensor([2, 2, -2, -2, -1, 3] * 4).view(4, 6)
    x = torch.randn(4, 6)
    got, want = torch.compile(fn, backend="fusec")(i, j, x), fn(i, j, x)
    print("matches eager:", torch.equal(got[0], want[0]), close(got[1], want[1]))
    print(tb.reports[-1])


# CHECK-LABEL: TEST: norms
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 2 ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  native_group_norm, _native_batch_norm_legit_no_training -> main_kernel_0
@run
def norms():
    model = torch.nn.Sequential(torch.nn.GroupNorm(8, 64), torch.nn.BatchNorm2d(64)).eval()
    with torch.no_grad():
        model[1].running_mean.uniform_(-1, 1)
        model[1].running_var.uniform_(0.5, 2)
        x = torch.randn(2, 64, 8, 8)
        print("matches eager:", close(torch.compile(model, backend="fusec")(x), model(x)))
    print(tb.reports[-1])


# The buckets and their embedding read no input: computed once, at compile time (hoist_constants.py);
# the add to the scores is the one kernel. (In kernels, the buckets compile too: CPU/iotas-constants.test.)
# CHECK-LABEL: TEST: buckets_alone
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (1 kernel, cpu)
# CHECK-NEXT:    fusec   fusec_region_0  cpu  select, add -> main_kernel_0
# CHECK-NEXT:    once    {{.*}}arange x2, {{.*}}embedding, {{.*}}linspace, log, {{.*}}where: constants
@run
def buckets_alone():
    def fn(scores):
        q, k = scores.shape[-2:]
        buckets = _relative_position_bucket(torch.arange(k)[None, :] - torch.arange(q)[:, None])
        return scores + torch.nn.functional.embedding(buckets, torch.linspace(0, 1, 32)[:, None])[..., 0]

    s = torch.randn(2, 16, 24)
    with torch.no_grad():
        print("matches eager:", close(torch.compile(fn, backend="fusec")(s), fn(s)))
    print(tb.reports[-1])
