"""Found by `fusec fuzz` (shrunk by hypothesis, then by hand): two outputs of one fusion group with
different element types (a bf16 value and an fp32 value computed from it); fails at the fused stage
on every target:

  error: stage 'fused' failed: ...: error: expected 'tensor<4x8xf32>' but got 'tensor<4x8xbf16>'

The same fault as multi_output_shapes.py. Fixed: fusec.group lists its results in runs of one type
(dialects/fusec_dialect.py)."""

import torch

torch.manual_seed(0)  # the same example inputs on every run


def bf16_and_fp32_outputs(x):
    v = -x
    return v.float() * 2.0, v


model = bf16_and_fp32_outputs
example_inputs = (torch.randn(4, 8, dtype=torch.bfloat16),)
