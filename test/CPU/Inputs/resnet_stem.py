"""ResNet's stem after its convolution: eval BatchNorm (trained-looking statistics), ReLU and a 3x3
max pool of stride 2 and padding 1, in bf16."""
import torch

torch.manual_seed(0)


class Stem(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(16)
        with torch.no_grad():
            self.bn.running_mean.uniform_(-1, 1)
            self.bn.running_var.uniform_(0.5, 2)
            self.bn.weight.normal_()
            self.bn.bias.normal_()

    def forward(self, x):
        return torch.nn.functional.max_pool2d(torch.relu(self.bn(x)), 3, 2, 1)


model = Stem().eval().to(torch.bfloat16)
example_inputs = (torch.randn(2, 16, 20, 20, dtype=torch.bfloat16),)
