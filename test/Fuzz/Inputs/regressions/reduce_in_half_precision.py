"""Found by `fusec fuzz` (shrunk by hand): a reduction computed in fp16 (or bf16) inside an fp32
model. The cuda target's row kernels shuffle the 16-bit partial results across lanes, which NVVM
does not allow:

  error: stage 'nvvm' failed: ...: error: 'nvvm.shfl.sync' op operand #1 must be 32-bit signless
  integer or 32-bit float, but got 'f16'

(`but got 'bf16'` for x.to(torch.bfloat16).sum(-1)). A bf16 *input* passes (computed in fp32); the
cpu target passes. Appeared with the row kernels of commit 0b8ca8a."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def amax_in_fp16(x):
    return torch.amax(x.to(torch.float16), dim=-1)


model = amax_in_fp16
example_inputs = (torch.randn(4, 8),)
