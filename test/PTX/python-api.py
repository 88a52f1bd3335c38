# The Python API without a GPU: fusec.compile returns the PTX, the launch manifest and every
# stage's IR; options are keyword arguments, checked; errors are FusecError with a clear message.

# RUN: %python %s | FileCheck %s

import torch

import fusec


def run(test):
    print(f"TEST: {test.__name__}")
    test()
    return test


def bias_gelu(x, b):
    return torch.nn.functional.gelu(x + b)


# CHECK-LABEL: TEST: compile_function
# CHECK-NEXT:  stages: torch linalg fused tiled gpu nvvm llvm ptx
# CHECK-NEXT:  kernels: ['main_kernel_0']
# CHECK-NEXT:  launch main_kernel_0 grid [1, 1, 1] block [256, 1, 1]
# CHECK-NEXT:  inputs: [('float32', [4, 64]), ('float32', [64])]
# CHECK-NEXT:  entry: True, target: True
@run
def compile_function():
    fn = fusec.compile(bias_gelu, (torch.randn(4, 64), torch.randn(64)))
    print("stages:", " ".join(fn.stages))
    print("kernels:", fn.manifest["kernels"])
    for step in fn.manifest["steps"]:
        print("launch", step["kernel"], "grid", step["grid"], "block", step["block"])
    print("inputs:", [(i["dtype"], i["shape"]) for i in fn.manifest["inputs"]])
    print(f"entry: {'.visible .entry main_kernel_0(' in fn.ptx}, target: {'.target sm_90' in fn.ptx}")


# CHECK-LABEL: TEST: module_parameters
# CHECK-NEXT:  roles: ['input', 'parameter', 'parameter']
# CHECK-NEXT:  parameters: ['weight', 'bias']
@run
def module_parameters():
    fn = fusec.compile(torch.nn.LayerNorm(64), (torch.randn(4, 64),))
    print("roles:", [i["role"] for i in fn.manifest["inputs"]])
    print("parameters:", [i["parameter"] for i in fn.manifest["inputs"] if i["role"] == "parameter"])


# CHECK-LABEL: TEST: options
# CHECK-NEXT:  block [128, 1, 1]
# CHECK-NEXT:  target: True
@run
def options():
    fn = fusec.compile(bias_gelu, (torch.randn(4, 64), torch.randn(64)), threads_per_block=128, arch="sm_80")
    print("block", fn.manifest["steps"][0]["block"])
    print("target:", ".target sm_80" in fn.ptx)


# CHECK-LABEL: TEST: errors
# CHECK-NEXT:  FusecError: error: unknown option(s) block_size; known: {{.*}}threads_per_block
# CHECK-NEXT:  FusecError: error: threads_per_block must be a multiple of 32 in [32, 1024], not 100
# CHECK-NEXT:  FusecError: error: {{.*}}example_inputs[1] is a float, not a tensor
@run
def errors():
    attempts = [
        lambda: fusec.compile(bias_gelu, (torch.randn(4, 64), torch.randn(64)), block_size=128),
        lambda: fusec.compile(bias_gelu, (torch.randn(4, 64), torch.randn(64)), threads_per_block=100),
        lambda: fusec.compile(bias_gelu, (torch.randn(4, 64), 1.0)),
    ]
    for attempt in attempts:
        try:
            attempt()
            print("no error")
        except fusec.FusecError as err:
            print(f"FusecError: {err}")
