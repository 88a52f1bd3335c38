# A program that compiled through the backend ends cleanly: at its exit the compile workers are told
# to stop (their stdin closed) and reaped, where they were left running and Python warned
# "ResourceWarning: subprocess ... is still running" and "unclosed file" for their pipes.

# RUN: %python -W always::ResourceWarning %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, private_cache, randomize

private_cache()
import torch
from fusec.torch_backend import workers

MODEL = randomize(MLPBlock())

# CHECK: matches eager: True
# CHECK-NEXT: compiled in a worker: True
# CHECK-NEXT: the end
# CHECK-NOT: ResourceWarning
# CHECK-NOT: unclosed
x = torch.randn(8, 64)
with torch.no_grad():
    got = torch.compile(MODEL, backend="fusec")(x)
print("matches eager:", close(got, MODEL(x)))
print("compiled in a worker:", not workers.in_process() and workers._pool is not None and workers._pool.alive > 0)
print("the end", flush=True)
