"""A pre-LayerNorm attention block: LayerNorm, the q/k/v projection split into heads, causal
scaled_dot_product_attention, the output projection and the residual. torch.export traces SDPA as
its math (fusec's export asks for it): on CUDA tensors it recorded the efficient kernel's op, which
torch-mlir does not import."""
import torch
torch.manual_seed(0)
class Block(torch.nn.Module):
    def __init__(self, d=64, h=4):
        super().__init__()
        self.h = h
        self.ln = torch.nn.LayerNorm(d)
        self.qkv = torch.nn.Linear(d, 3 * d)
        self.proj = torch.nn.Linear(d, d)
    def forward(self, x):
        b, t, d = x.shape
        q, k, v = self.qkv(self.ln(x)).view(b, t, 3, self.h, d // self.h).permute(2, 0, 3, 1, 4)
        a = torch.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
        return x + self.proj(a.transpose(1, 2).reshape(b, t, d))
model = Block()
example_inputs = (torch.randn(2, 16, 64),)
