"""Found by `fusec fuzz` (shrunk by hand): an op computed in bf16 inside an fp32 model. The cpu
target compiles it, but its runtime cannot find the kernel:

  error: kernel main_kernel_0 is not in the cpu target's module

although the manifest lists main_kernel_0 and the llvm-dialect module defines
`llvm.func @main_kernel_0(...) attributes {fusec.kernel}` (ExecutionEngine.raw_lookup returns 0).
The same with rsqrt; fp16 (x.to(torch.float16)) and a bf16 *input* pass; the cuda target compiles it."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def exp_in_bf16(x):
    return torch.exp(x.to(torch.bfloat16))


model = exp_in_bf16
example_inputs = (torch.randn(4, 8),)
