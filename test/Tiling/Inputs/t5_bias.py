"""T5's encoder attention bias added to scores of [batch, heads, q, k] (bf16): the bucket of k - q
(transformers' own `_relative_position_bucket`), its embedding [32, heads] permuted to [heads, q, k]
(`T5Bias`, test/CPU/Inputs/t5_buckets.py). The bucket reads neither batch nor heads."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "CPU", "Inputs"))
from t5_buckets import T5Bias  # noqa: E402

torch.manual_seed(0)
model = T5Bias(8).to(torch.bfloat16)
example_inputs = (torch.randn(4, 8, 1024, 1024, dtype=torch.bfloat16),)
