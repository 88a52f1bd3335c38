"""T5's encoder attention bias added to scores of [batch, heads, q, k] (bf16): the bucket of k - q
(transformers' own `_relative_position_bucket`, test/CPU/Inputs/t5_buckets.py), its embedding [32,
heads] permuted to [heads, q, k]. The bucket reads neither batch nor heads."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "CPU", "Inputs"))
from t5_buckets import _relative_position_bucket  # noqa: E402


class T5Bias(torch.nn.Module):
    def __init__(self, heads):
        super().__init__()
        self.bias = torch.nn.Embedding(32, heads)

    def forward(self, scores):
        q, k = scores.shape[-2:]
        rel = torch.arange(k, device=scores.device)[None, :] - torch.arange(q, device=scores.device)[:, None]
        return scores + self.bias(_relative_position_bucket(rel)).permute(2, 0, 1)


torch.manual_seed(0)
model = T5Bias(8).to(torch.bfloat16)
example_inputs = (torch.randn(4, 8, 1024, 1024, dtype=torch.bfloat16),)
