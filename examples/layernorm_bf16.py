"""nn.LayerNorm in bf16, 8 x 4096: bf16 input, weight and bias, read and written in bf16, computed in fp32."""

import torch

torch.manual_seed(0)  # the same weights and example inputs on every run
model = torch.nn.LayerNorm(4096)
with torch.no_grad():  # not the default ones and zeros, so that a mix-up of the two shows
    model.weight.normal_()
    model.bias.normal_()
model = model.to(torch.bfloat16)
example_inputs = (torch.randn(8, 4096, dtype=torch.bfloat16),)
