"""Found by `fusec fuzz` (shrunk by hand), after bf16_compute_cpu.py was fixed: a bf16 sum over a
row of 1001 (a row of 100 passes). The cpu target compiles it, but its runtime cannot find the
kernel:

  error: kernel main_kernel_0 is not in the cpu target's module

Once it ran, it was 3% off: the sum accumulated in bf16. Fixed: bf16/fp16 sums and means accumulate
in fp32, as PyTorch's do (fusec.frontend.torch_import)."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def sum_in_bf16(x):
    return x.to(torch.bfloat16).sum(dim=-1)


model = sum_in_bf16
example_inputs = (torch.randn(2, 1001),)
