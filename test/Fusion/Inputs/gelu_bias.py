import torch

torch.manual_seed(0)
model = lambda x, b: torch.nn.functional.gelu(x + b, approximate="tanh")
example_inputs = (torch.randn(8, 4096), torch.randn(4096))
