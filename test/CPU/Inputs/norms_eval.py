"""GroupNorm(32, 512) and BatchNorm2d with running statistics (eval) of its result, with weights,
biases and statistics that are not their initial values."""

import torch

torch.manual_seed(0)


class Norms(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.group = torch.nn.GroupNorm(32, 512)
        self.batch = torch.nn.BatchNorm2d(512)
        with torch.no_grad():
            for p in (self.group.weight, self.group.bias, self.batch.weight, self.batch.bias,
                      self.batch.running_mean):
                p.uniform_(-1, 1)
            self.batch.running_var.uniform_(0.5, 2)

    def forward(self, x):
        g = self.group(x)
        return g, self.batch(g)


model = Norms().eval()
example_inputs = (torch.randn(2, 512, 8, 8),)
