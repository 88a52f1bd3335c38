# The regions of a graph compile in parallel threads, and their fake tensors share one FakeTensorMode:
# while an op on any of them runs (another region's `permute`, `deepcopy`), that mode says it is
# inside a kernel, `val.device` reads `meta` and a second op on it raises. So what a compile needs
# from the fake tensors is read before the threads start (prepared_region.py). Here each region's
# compile runs with its fake mode marked inside a kernel, as if another thread were in one: every
# region still compiles and the model matches eager (before, the mistral training step on the GPU
# lost a different region to "inputs on meta" or "in_kernel_invocation must be False" per run).

# RUN: env FUSEC_COMPILE_IN_PROCESS=1 %python %s 2>&1 | FileCheck %s
# CHECK: regions compiled while the fake mode was busy: {{[2-9]}}
# CHECK-NOT: inputs on meta
# CHECK-NOT: in_kernel_invocation
# CHECK: fusec regions 2, in PyTorch 0
# CHECK: matches eager: True

import torch

import fusec.torch_backend as backend
from fusec.torch_backend import kernel

busy = []
original = kernel.compile_region


def compile_while_busy(name, gm, *args, **kwargs):
    vals = [n.meta["val"] for n in gm.graph.nodes if isinstance(n.meta.get("val"), torch.Tensor)]
    mode = vals[0].fake_mode
    mode.in_kernel_invocation = True  # what another thread's op on a fake tensor does meanwhile
    try:
        return original(name, gm, *args, **kwargs)
    finally:
        mode.in_kernel_invocation = False
        busy.append(name)


kernel.compile_region = compile_while_busy
reports = []
original_partition = backend._partition_and_compile


def keep_report(*args, **kwargs):
    fn, report = original_partition(*args, **kwargs)
    reports.append(report)
    return fn, report


backend._partition_and_compile = keep_report


def f(x, w):
    y = torch.softmax(x * 2.0, dim=-1).permute(1, 0)  # a permuted output: written in order
    z = torch.mm(y, w)
    return torch.relu(z + 1.0).sum(-1)


x, w = torch.randn(64, 48), torch.randn(64, 16)
out = torch.compile(f, backend="fusec")(x, w)
print(f"regions compiled while the fake mode was busy: {len(busy)}")
for report in reports:
    for result in report.regions:
        print(f"{result.name}: {result.status} {result.reason}")
fusec = sum(r.status != "pytorch" for rep in reports for r in rep.regions)
pytorch = sum(r.status == "pytorch" for rep in reports for r in rep.regions)
print(f"fusec regions {fusec}, in PyTorch {pytorch}")
print("matches eager:", torch.allclose(out, f(x, w), rtol=1e-4, atol=1e-4))
