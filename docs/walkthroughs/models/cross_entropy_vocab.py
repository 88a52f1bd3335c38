"""Cross-entropy over GPT-2's vocabulary: the mean over 512 rows of 50257 bf16 logits, every 97th
target ignored (-100)."""

import torch
import torch.nn.functional as F

torch.manual_seed(0)  # the same example inputs on every run


def cross_entropy(x, t):
    return F.cross_entropy(x, t)


targets = torch.randint(0, 50257, (512,))
targets[::97] = -100  # F.cross_entropy's ignore_index: these rows count for nothing
model = cross_entropy
example_inputs = (torch.randn(512, 50257, dtype=torch.bfloat16), targets)
