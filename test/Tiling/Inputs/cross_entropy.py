"""Cross-entropy over GPT-2's vocabulary of 50257 (a width that is not whole 128-bit vectors), bf16
logits: each row's max, sum of exp(x - max) and target's logit, then the mean over the rows."""
import torch
import torch.nn.functional as F

torch.manual_seed(0)


def cross_entropy(logits, targets):
    return F.cross_entropy(logits, targets)


model = cross_entropy
example_inputs = (torch.randn(512, 50257, dtype=torch.bfloat16), torch.randint(0, 50257, (512,)))
