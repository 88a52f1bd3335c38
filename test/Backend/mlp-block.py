# torch.compile(backend="fusec") on the CPU: the MLP block (Linear -> LayerNorm -> GELU -> Linear +
# residual) matches eager, in inference and in training (the backward stays in PyTorch); the
# partition report names the two fusec regions, their kernels, and why the rest runs in PyTorch;
# the report prints with the `explain` option or FUSEC_EXPLAIN=1, and not otherwise.

# RUN: %python %s | FileCheck %s

import contextlib
import io
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import MLPBlock, close, private_cache, randomize, run

private_cache()
import fusec.torch_backend as tb
import torch


# CHECK-LABEL: TEST: registered
# CHECK-NEXT:  lookup: fusec_backend
# CHECK-NEXT:  listed: True
@run
def registered():
    from torch._dynamo.backends.registry import lookup_backend

    print("lookup:", lookup_backend("fusec").__name__)
    print("listed:", "fusec" in torch._dynamo.list_backends())


# CHECK-LABEL: TEST: inference
# CHECK-NEXT:  matches eager: True True
# CHECK-NEXT:  fusec: graph {{[0-9]+}}: 7 ATen ops -> 2 fusec regions (2 kernels, cpu), 4 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  native_layer_norm, gelu -> main_kernel_0 [compiled {{[0-9.]+}}s]
# CHECK-NEXT:    fusec   fusec_region_1  cpu  add -> main_kernel_0 [compiled {{[0-9.]+}}s]
# CHECK-NEXT:    pytorch aten.addmm x2  matmul (contraction): PyTorch's cuBLAS/MKL kernel
# CHECK-NEXT:    pytorch aten.t x2  a view with no arithmetic beside it
# CHECK-NEXT:  kernels: ['fusec_region_0/main_kernel_0', 'fusec_region_1/main_kernel_0']
# CHECK-NEXT:  stats: {'compiled': 2}
@run
def inference():
    model = randomize(MLPBlock())
    compiled = torch.compile(model, backend="fusec")
    with torch.no_grad():
        x1, x2 = torch.randn(8, 64), torch.randn(8, 64)
        print("matches eager:", close(compiled(x1), model(x1)), close(compiled(x2), model(x2)))
    print(tb.reports[-1])
    print("kernels:", tb.reports[-1].kernels)
    print("stats:", dict(tb.stats))


# CHECK-LABEL: TEST: training
# CHECK-NEXT:  output: True
# CHECK-NEXT:  grad x: True
# CHECK-NEXT:  grad fc1.weight: True
# CHECK-NEXT:  grad norm.weight: True
# CHECK-NEXT:  regions: fusec_region_0 fusec_region_1
@run
def training():
    model = randomize(MLPBlock())
    compiled = torch.compile(model, backend="fusec")
    x = torch.randn(8, 64, requires_grad=True)
    got = compiled(x)
    got.square().sum().backward()
    grads = {"x": x.grad.clone(), **{n: p.grad.clone() for n, p in model.named_parameters()}}
    x.grad = None
    model.zero_grad()
    want = model(x)
    want.square().sum().backward()
    print("output:", close(got.detach(), want.detach()))
    print("grad x:", close(grads["x"], x.grad, 1e-4))
    for name in ("fc1.weight", "norm.weight"):
        print(f"grad {name}:", close(grads[name], dict(model.named_parameters())[name].grad, 1e-4))
    print("regions:", " ".join(r.name for r in tb.reports[-1].fusec_regions))


# CHECK-LABEL: TEST: explain_quiet_by_default
# CHECK-NEXT:  printed: ''
@run
def explain_quiet_by_default():
    err = io.StringIO()
    with contextlib.redirect_stderr(err), torch.no_grad():
        torch.compile(randomize(MLPBlock()), backend="fusec")(torch.randn(8, 64))
    print("printed:", repr(err.getvalue()))


# CHECK-LABEL: TEST: explain_option
# CHECK-NEXT:  printed: fusec: graph {{[0-9]+}}: 7 ATen ops -> 2 fusec regions (2 kernels, cpu), 4 ops in PyTorch
# CHECK-NEXT:    fusec   fusec_region_0  cpu  native_layer_norm, gelu -> main_kernel_0 [already compiled]
@run
def explain_option():
    err = io.StringIO()
    with contextlib.redirect_stderr(err), torch.no_grad():
        torch.compile(randomize(MLPBlock()), backend="fusec", options={"explain": True})(torch.randn(8, 64))
    print("printed:", err.getvalue().strip())


# CHECK-LABEL: TEST: explain_environment
# CHECK-NEXT:  printed: fusec: graph {{[0-9]+}}: 7 ATen ops -> 2 fusec regions
@run
def explain_environment():
    err = io.StringIO()
    os.environ["FUSEC_EXPLAIN"] = "1"
    try:
        with contextlib.redirect_stderr(err), torch.no_grad():
            torch.compile(randomize(MLPBlock()), backend="fusec")(torch.randn(8, 64))
    finally:
        del os.environ["FUSEC_EXPLAIN"]
    print("printed:", err.getvalue().splitlines()[0] if err.getvalue() else "")
