# A model traced on CUDA tensors imports with no device left in it: torch-mlir's linalg lowering knows
# only the CPU, and a tensor the model makes on its inputs' device (masked_fill's -inf decomposes into
# where(m, scalar_tensor(-inf, device=cuda:0), x)) was refused on the GPU ("aten.to.device has no
# linalg lowering") while the same model compiled on the CPU; a constant's .to(x.device) is a
# prims.device_put, which torch-mlir cannot lower. CUDA tensors are faked here
# (FakeTensorMode), so the test needs no GPU: the import and the PTX compile never touch one.

# RUN: %python %s | FileCheck %s

import torch
from torch._subclasses.fake_tensor import FakeTensorMode

import fusec
from fusec.frontend import ModelSpec
from fusec.frontend.torch_import import import_to_torch_dialect

mode = FakeTensorMode(allow_non_fake_inputs=True)
with mode:
    x = torch.empty(8, 64, device="cuda")
    m = torch.empty(8, 64, dtype=torch.bool, device="cuda")


def masked_softmax(x, m):
    return torch.softmax(x.masked_fill(m, float("-inf")), dim=-1)


def where_zero(x, m):
    return torch.where(m, x, torch.zeros((), device=x.device)) * 2


_SCALE = torch.linspace(0.5, 2, 64)


def constant_to_device(x, m):
    # a CPU constant moved to the input's device traces as prims.device_put, which torch-mlir lacks
    return torch.where(m, x, x * _SCALE.to(x.device))


with mode:
    torch_ir = str(import_to_torch_dialect(ModelSpec(masked_softmax, (x, m))))
    print("device" in torch_ir)
    # CHECK: False
    # CHECK: torch.vtensor.literal(dense<0xFF800000> : tensor<f32>)
    print(next(line for line in torch_ir.splitlines() if "literal" in line).strip())
    for model in (masked_softmax, where_zero, constant_to_device):
        fn = fusec.compile(model, (x, m))
        # CHECK: masked_softmax: PTX for sm_{{[0-9]+}}, 1 kernel(s)
        # CHECK: where_zero: PTX for sm_{{[0-9]+}}, 1 kernel(s)
        # CHECK: constant_to_device: PTX for sm_{{[0-9]+}}, 1 kernel(s)
        print(f"{model.__name__}: PTX for {fn.manifest['arch']}, {len(fn.manifest['kernels'])} kernel(s)")
