"""LayerNorm over rows of 128256 bf16 (Llama 3's vocabulary size: 256 KB a row)."""
import torch

model = torch.nn.LayerNorm(128256).to(torch.bfloat16)
example_inputs = (torch.randn(64, 128256, dtype=torch.bfloat16),)
