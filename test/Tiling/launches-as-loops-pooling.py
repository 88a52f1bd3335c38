# The cuda target's kernels for pooling windows, run on the CPU as loops (Inputs/launches_as_loops.py):
# a vector of outputs reads each window column as a strided run of one input row, through aligned
# vector loads and static extracts (codegen/strided_gathers.py), and matches eager. Each case prints
# its lanes, the kernel's scalar loads (0: every read a vector) and the largest error.
#  - a clamped strided gather whose edge values are used unmasked (Inputs/clamped_strided_gather.mlir):
#    lanes left of the row read its first column, lanes past its end its last, as the clamp says;
#  - poolings with padding (the window's clamped columns are masked by the pooling's identity):
#    stride 2, stride 1 (clamped at both edges), dilation with ceil_mode, stride 4, 1-D, an average;
#  - poolings without padding: their window reads stay gathers (not index maps, which would be scalar
#    accesses), the ReLU before one computed at the elements it reads: one kernel, vectors.

# RUN: %python %s | FileCheck %s

import os
import re
import sys

import torch

import fusec
from fusec import driver
from fusec.options import CompileOptions

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "Inputs"))
from launches_as_loops import run_flat_kernels  # noqa: E402

F = torch.nn.functional


def report(name, tiled, inputs, want):
    got = run_flat_kernels(tiled, inputs, [w.shape for w in want])
    lanes = re.findall(r"lanes = (\d+)", tiled)
    scalar_loads = len(re.findall(r"= memref.load %arg", tiled))
    err = max(float((g - w).abs().max()) for g, w in zip(got, want))
    print(f"{name}: lanes {' '.join(lanes)}, scalar loads {scalar_loads}, max abs error {err:.1e}")


torch.manual_seed(0)
x = torch.randn(2, 3, 32)
comp = driver.compile_mlir_file(os.path.join(HERE, "Inputs", "clamped_strided_gather.mlir"),
                                CompileOptions(target="cuda"), stop="tiled")
w = torch.arange(16)
# CHECK: clamped gather: lanes 4, scalar loads 0, max abs error 0.0e+00
report("clamped gather", comp.texts["tiled"], (x,),
       (x[..., (2 * w + 3).clamp(0, 31)] - x[..., (2 * w - 3).clamp(0, 31)],))

POOLS = {
    "max 3x3 stride 2": lambda x: F.max_pool2d(x, 3, 2, 1),
    "avg 3x3 stride 1": lambda x: F.avg_pool2d(x, 3, 1, 1),
    "max dilation 2 ceil": lambda x: F.max_pool2d(x, 3, 2, 1, dilation=2, ceil_mode=True),
    "max 5x5 stride 4 of relu": lambda x: F.max_pool2d(x.relu(), 5, 4, 2),
    "max 1-d stride 2": lambda x: F.max_pool1d(x.flatten(2), 3, 2, 1),
    "avg without the padding": lambda x: F.avg_pool2d(x, 3, 1, 1, count_include_pad=False),
    "max 2x2 no padding": lambda x: F.max_pool2d(x, 2),
    "avg 4x4 of relu no padding": lambda x: F.avg_pool2d(x.relu(), 4),
}
x = torch.randn(2, 8, 12, 32)
for name, fn in POOLS.items():
    compiled = fusec.compile(fn, (x,))
    report(name, compiled.stages["tiled"], (x,), (fn(x),))
# CHECK: max 3x3 stride 2: lanes 4, scalar loads 0, max abs error 0.0e+00
# CHECK: avg 3x3 stride 1: lanes 4, scalar loads 0, max abs error {{0.0e\+00|[0-9.]+e-0[7-9]}}
# CHECK: max dilation 2 ceil: lanes 4, scalar loads 0, max abs error 0.0e+00
# CHECK: max 5x5 stride 4 of relu: lanes 4, scalar loads 0, max abs error 0.0e+00
# CHECK: max 1-d stride 2: lanes 4, scalar loads 0, max abs error 0.0e+00
# CHECK: avg without the padding: lanes 4, scalar loads 0, max abs error {{0.0e\+00|[0-9.]+e-0[7-9]}}
# CHECK: max 2x2 no padding: lanes 4, scalar loads 0, max abs error 0.0e+00
# CHECK: avg 4x4 of relu no padding: lanes 4, scalar loads 0, max abs error {{0.0e\+00|[0-9.]+e-0[7-9]}}
