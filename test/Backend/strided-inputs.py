# A region whose input is a strided view (q and k split into heads: a view, then a transpose) takes
# the views in, down to the contiguous matmul result: inside they are index maps of the kernel's
# reads, outside the runtime would copy each strided input to contiguous memory first (BERT: two
# PyTorch copies a layer before its attention's region). A region of a copy alone
# (`x.t().contiguous()`) is left as it was, to PyTorch (zero-kernel-regions.py). `aten.alias` is
# reported as the free view it is. CPU tensors.

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import close, private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch


class Scores(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.q, self.k = torch.nn.Linear(64, 64), torch.nn.Linear(64, 64)

    def forward(self, x):
        b, t, d = x.shape
        q = self.q(x).view(b, t, 4, 16).transpose(1, 2)
        k = self.k(x).view(b, t, 4, 16).transpose(1, 2)
        return torch.softmax((q.float() * 0.25) @ (k.float().transpose(-1, -2) * 0.25), -1)


# CHECK-LABEL: TEST: heads
# CHECK-NEXT:  matches eager: True
# CHECK-NEXT:  transposes in fusec regions: 3, in PyTorch: 0
@run
def heads():
    torch.manual_seed(0)
    model, x = Scores(), torch.randn(2, 8, 64)
    with torch.no_grad():
        print("matches eager:", close(torch.compile(model, backend="fusec")(x), model(x), 1e-5))
    report = tb.reports[-1]
    inside = sum(r.ops.count("aten.transpose") for r in report.fusec_regions)
    outside = sum(n for (op, _), n in report.pytorch_ops.items() if op == "aten.transpose")
    print(f"transposes in fusec regions: {inside}, in PyTorch: {outside}")


# `aten.alias` (Llama's and GPT-2's graphs have one) is a free view too, reported as one.
# CHECK-LABEL: TEST: alias
# CHECK-NEXT:  pytorch aten.alias  a view with no arithmetic beside it: stays a free PyTorch view
@run
def alias():
    with torch.no_grad():
        torch.compile(lambda x: (torch.ops.aten.alias(x), (x * 2).sin()), backend="fusec")(torch.randn(4, 8))
    print("\n".join(line for line in tb.reports[-1].lines() if "alias" in line))
