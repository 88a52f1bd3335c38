"""Found by `fusec fuzz`: a max over fp16 values (-inf as a half literal; shuffles of 32-bit words)."""
import torch
torch.manual_seed(0)
def f(x):
    return torch.amax(torch.where(x > 0, x, -x).to(torch.float16), dim=-1)
model = f
example_inputs = (torch.randn(2, 8),)
