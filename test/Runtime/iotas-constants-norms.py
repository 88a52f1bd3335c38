# On the GPU, against CUDA eager: T5's relative position buckets (one kernel, exact), arange * x
# fused (one kernel), factories and constant tensors read by the kernels, integer edge cases
# (floor_divide/remainder of negative operands, the most negative int64 by -1, quotients past 2^24),
# GroupNorm(32, 512) on 32x512x64x64 (it did not compile for the GPU: host op 'memref.get_global';
# one kernel since session 33), GroupNorm + SiLU in bf16, poolings and ResNet's stem in one kernel,
# and eval BatchNorm2d on 64x256x64x64 (it was refused: cf.assert). Floats within fusec's tolerance
# of eager in float64, integers exact.

# REQUIRES: cuda
# RUN: %python %s %S/../CPU/Inputs | FileCheck %s

import importlib.util
import os
import sys

import torch

torch.manual_seed(0)
inputs_dir = sys.argv[1]
sys.path.insert(0, inputs_dir)
import eager_check  # noqa: E402 (test/CPU/Inputs, the first argument)


def load(name):
    spec = importlib.util.spec_from_file_location(name, os.path.join(inputs_dir, f"{name}.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def check(label, model, inputs, kernels=None):
    eager_check.check(label, model, inputs, kernels, cuda)


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
check("group norm", group, (torch.randn(32, 512, 64, 64, device=cuda),), kernels=1)
# CHECK: group norm: 1 kernel, ok

# A diffusion UNet's GroupNorm + SiLU in bf16 with few rows (2 x 32 groups of 40960: rows over clusters).
silu = load("../../Fusion/Inputs/group_norm_silu_bf16").GroupNormSiLU().to(cuda, torch.bfloat16)
check("group norm silu bf16", silu, (torch.randn(2, 48, 64, 64, device=cuda, dtype=torch.bfloat16),), kernels=1)
# CHECK: group norm silu bf16: 1 kernel, ok

# Poolings (test/CPU/Inputs/pools.py: padding, dilation, ceil_mode, 1-D, averages) at 32x64x57x59, and
# ResNet's stem (eval BatchNorm + ReLU + max pool, bf16) at 32x64x112x112 in one kernel.
check("pools", load("pools").model, (torch.randn(32, 64, 57, 59, device=cuda),), kernels=8)
# CHECK: pools: 8 kernels, ok
stem = load("resnet_stem").Stem().to(cuda).eval()
check("resnet stem", stem.to(torch.bfloat16), (torch.randn(32, 16, 112, 112, device=cuda, dtype=torch.bfloat16),),
      kernels=1)
# CHECK: resnet stem: 1 kernel, ok
check("resnet stem fp32", stem.float(), (torch.randn(32, 16, 112, 112, device=cuda),), kernels=1)
# CHECK: resnet stem fp32: 1 kernel, ok

# Outputs whole vectors wide: each window column read as aligned vectors of its input row
# (codegen/strided_gathers.py), clamped at the left edge (stride 2), both edges (stride 1), the
# right (ceil_mode), stride 4; without padding (the reads stay gathers, ReLU pulled into them).
F = torch.nn.functional
vectors = (lambda x: (F.max_pool2d(x, 3, 2, 1), F.avg_pool2d(x, 3, 1, 1),
                      F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True), F.max_pool2d(x.relu(), 5, 4, 2),
                      F.max_pool2d(x, 2), F.avg_pool2d(x.relu(), 2)))
check("pools of whole vectors", vectors, (torch.randn(16, 32, 48, 64, device=cuda),))
# CHECK: pools of whole vectors: {{[0-9]+ kernels?}}, ok
check("pools of whole vectors bf16", vectors, (torch.randn(16, 32, 48, 64, device=cuda, dtype=torch.bfloat16),))
# CHECK: pools of whole vectors bf16: {{[0-9]+ kernels?}}, ok

batch = torch.nn.BatchNorm2d(256).to(cuda)
with torch.no_grad():
    batch.weight.uniform_(-1, 1)
    batch.bias.uniform_(-1, 1)
    batch.running_mean.uniform_(-1, 1)
    batch.running_var.uniform_(0.5, 2)
check("batch norm eval", batch.eval(), (torch.randn(64, 256, 64, 64, device=cuda),))
# CHECK: batch norm eval: {{[0-9]+ kernels?}}, ok
