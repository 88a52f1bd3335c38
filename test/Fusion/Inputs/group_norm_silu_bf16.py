"""A diffusion UNet's GroupNorm then SiLU, in bf16, with trained-looking weights: GroupNorm(8, 48) on
3x48x5x7 (a spatial size of 35: rows that are no multiple of a vector)."""
import torch

torch.manual_seed(0)


class GroupNormSiLU(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = torch.nn.GroupNorm(8, 48)
        with torch.no_grad():
            self.norm.weight.normal_()
            self.norm.bias.normal_()

    def forward(self, x):
        return torch.nn.functional.silu(self.norm(x))


model = GroupNormSiLU().to(torch.bfloat16)
example_inputs = (torch.randn(3, 48, 5, 7, dtype=torch.bfloat16),)
