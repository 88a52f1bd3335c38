# aten._safe_softmax (softmax whose rows of -inf only are 0, not NaN: what a masked attention's math
# path calls in the forward of a training graph, T5's among them) is a fusec region: values against
# eager, the fully masked row 0 in both, and the gradient (the backward runs in PyTorch). CPU tensors.

# RUN: %python %s 2>&1 | FileCheck %s

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "Inputs"))
from blocks import private_cache, run

private_cache()
import fusec.torch_backend as tb
import torch


def scores(x, mask):
    return torch.ops.aten._safe_softmax(x.masked_fill(mask, float("-inf")) * 0.5, -1)


# CHECK-LABEL: TEST: masked_rows
# CHECK-NEXT:  matches eager: True masked row: [0.0, 0.0, 0.0]
# CHECK-NEXT:  grad matches eager: True
# CHECK-NEXT:  fusec_region_0 cpu compiled: {{.*}}_safe_softmax
@run
def masked_rows():
    x = torch.randn(6, 33)
    mask = torch.rand(6, 33) < 0.3
    mask[2] = True
    want = scores(x, mask)
    xg = x.clone().requires_grad_()
    got = torch.compile(scores, backend="fusec")(xg, mask)
    print("matches eager:", torch.allclose(got, want, rtol=1e-5, atol=1e-6) and not got.isnan().any().item(),
          "masked row:", got[2, :3].tolist())
    got.pow(2).sum().backward()
    xe = x.clone().requires_grad_()
    scores(xe, mask).pow(2).sum().backward()
    print("grad matches eager:", torch.allclose(xg.grad, xe.grad, rtol=1e-5, atol=1e-6))
    print("\n".join(f"{r.name} {r.target} {r.status}: {', '.join(r.ops)}" for r in tb.reports[-1].regions))
