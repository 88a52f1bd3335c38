# Max and average pooling inside torch.compile(backend="fusec") regions (cpu target): ResNet's stem
# after its convolution (eval BatchNorm, ReLU, max_pool2d_with_indices) is one region of one kernel;
# avg_pool2d too. In training the max pool's indices are saved for its backward: fusec computes them
# with the maxima, in the maxima's kernel (--fusec-unroll-window-reductions), the backward (a scatter)
# stays in PyTorch, and the gradients match eager's.

# RUN: %python %s | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch

torch.manual_seed(0)


def stem():
    model = torch.nn.Sequential(torch.nn.BatchNorm2d(8), torch.nn.ReLU(), torch.nn.MaxPool2d(3, 2, 1))
    with torch.no_grad():
        model[0].running_mean.uniform_(-1, 1)
        model[0].running_var.uniform_(0.5, 2)
    return model


# CHECK-LABEL: TEST: inference
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  {{.*}}max_pool2d_with_indices{{.*}} -> main_kernel_0
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: {{[0-9]+}} ATen ops -> 1 fusec region (1 kernel, cpu), 0 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  {{.*}}avg_pool2d{{.*}} -> main_kernel_0
@run
def inference():
    model = stem().eval()
    x = torch.randn(2, 8, 15, 17)
    with torch.no_grad():
        got = torch.compile(model, backend="fusec")(x)
        report = tb.reports[-1]
        avg = lambda y: torch.nn.functional.avg_pool2d(y * 2, 3, 2, 1, count_include_pad=False)
        got_avg = torch.compile(avg, backend="fusec")(x)
        print("matches eager:", close(got, model(x)), close(got_avg, avg(x)))
    print(report)
    print(tb.reports[-1])


# CHECK-LABEL: TEST: training
# CHECK-NEXT:  matches eager: True True
# CHECK:       fusec   fusec_region_0  cpu  relu, mul, max_pool2d_with_indices, sum -> main_kernel_0, {{.*}}[compiled
# CHECK-NOT:   pytorch aten.max_pool2d_with_indices
@run
def training():
    def fn(x):
        return torch.nn.functional.max_pool2d(torch.relu(x) * 2, 3, 2, 1).sum()

    x = torch.randn(2, 4, 9, 9, requires_grad=True)
    before = len(tb.reports)
    got = torch.compile(fn, backend="fusec")(x)
    (grad,) = torch.autograd.grad(got, x)
    want = fn(x)
    (want_grad,) = torch.autograd.grad(want, x)
    print("matches eager:", close(got, want), close(grad, want_grad))
    print("\n".join(str(r) for r in tb.reports[before:]))
