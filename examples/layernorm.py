"""nn.LayerNorm over the last dimension, 8 x 4096 fp32; its weight and bias are launch inputs."""

import torch

torch.manual_seed(0)  # the same weights and example inputs on every run
model = torch.nn.LayerNorm(4096)
with torch.no_grad():  # not the default ones and zeros, so that a mix-up of the two shows
    model.weight.normal_()
    model.bias.normal_()
example_inputs = (torch.randn(8, 4096),)
