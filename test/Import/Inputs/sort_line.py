"""A softmax, a sort and a mean on one line (line 10): a dozen ATen ops share its location, and one
of them, the sort, lowers to `tm_tensor.sort`, which fusec cannot compile."""

import torch
import torch.nn.functional as F


def running(logits, target):
    scaled = logits * 2.0
    return F.softmax(scaled, -1).sort(-1).values.log().mean() + target.float().mean()


model = running
example_inputs = (torch.randn(64, 1000), torch.randint(0, 1000, (64,)))
