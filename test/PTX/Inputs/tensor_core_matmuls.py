"""Matmuls the `wgmma` schedule takes on sm_90a: nn.Linear in bf16 (its [N, K] weight read as it
lies; 256x384: 128x128 tiles), `a @ b.T` in fp16 (8192x2048: 512 tiles of 128x256), each with its
epilogue; and `x @ w` (w [K, N], read along N), which it builds from a copy of w transposed to
[N, K] (--fusec-transpose-tensor-core-operands)."""
import torch

torch.manual_seed(0)


class Matmuls(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.proj = torch.nn.Linear(512, 384).to(torch.bfloat16)

    def forward(self, x, a, b, w):
        return self.proj(x), a @ b.T, x @ w


model = Matmuls()
example_inputs = (torch.randn(2, 128, 512, dtype=torch.bfloat16), torch.randn(8192, 128, dtype=torch.float16),
                  torch.randn(2048, 128, dtype=torch.float16), torch.randn(512, 256, dtype=torch.bfloat16))
