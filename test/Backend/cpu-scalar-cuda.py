# REQUIRES: cuda
# A Python float passed to a model compiled with dynamic=True reaches the graph as a 0-dim CPU
# tensor (dynamo does not specialize it). PyTorch lets such a tensor join CUDA ops as a scalar, and
# so does fusec: the region moves it to the GPU at each call. It was refused before ("inputs on
# several devices (cpu, cuda:0)"), which sent every RMSNorm of Llama with dynamic=True to PyTorch.
# RUN: %python %s | FileCheck %s
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache

private_cache()
import torch

import fusec.torch_backend as tb


class RMSNorm(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.rand(64, device="cuda") + 0.5)

    def forward(self, x, eps):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * self.weight


norm = RMSNorm()
compiled = torch.compile(norm, backend="fusec", dynamic=True)
for shape, eps in [((2, 8, 64), 1e-6), ((3, 11, 64), 1e-5)]:
    x = torch.randn(shape, device="cuda")
    err = (compiled(x, eps) - norm(x, eps)).abs().max().item()
    print(f"{list(shape)} eps {eps}: matches eager: {err < 1e-5}")
statuses = [(r.status, r.reason) for report in tb.reports for r in report.regions]
print("regions fusec could not take:", [why for status, why in statuses if status == "pytorch"])
print("cpu scalar input:", any(d.type == "cpu" for report in tb.reports for r in report.regions if r.inputs
                               for _, _, d in r.inputs[0]))
# CHECK: [2, 8, 64] eps 1e-06: matches eager: True
# CHECK: [3, 11, 64] eps 1e-05: matches eager: True
# CHECK: regions fusec could not take: []
# CHECK: cpu scalar input: True
