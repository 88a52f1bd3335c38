"""bf16 contractions as transformers write them: an MLP (nn.Linear, GELU, nn.Linear over [batch, seq,
hidden]: the weights read in their [N, K] layout), `a @ b + bias`, and attention scores
`q @ k.transpose(-2, -1)` (a batched matmul of a transposed operand). torch-mlir widens every bf16
operand to f32 and transposes the weights first; --fusec-contraction-operands reads them through."""
import torch

torch.manual_seed(0)


class Mixed(torch.nn.Module):
    def __init__(self, d=64, hidden=96):
        super().__init__()
        self.up = torch.nn.Linear(d, hidden)
        self.down = torch.nn.Linear(hidden, d)

    def forward(self, x, b, bias, q, k):
        mlp = self.down(torch.nn.functional.gelu(self.up(x)))
        scores = q @ k.transpose(-2, -1)
        return mlp, x[0] @ b + bias, scores


model = Mixed().to(torch.bfloat16)
bf = dict(dtype=torch.bfloat16)
example_inputs = (torch.randn(2, 16, 64, **bf), torch.randn(64, 40, **bf), torch.randn(40, **bf),
                  torch.randn(4, 16, 32, **bf), torch.randn(4, 24, 32, **bf))
