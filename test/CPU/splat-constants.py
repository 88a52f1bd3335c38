# Constant tensors of one value (full_like, ones, zeros_like) in a model compile and match eager on
# the cpu target: a masked softmax whose mask is a full_like(-inf), plus ones and a zeros_like bias
# (--fusec-fold-splat-constants; they were refused: "host op 'memref.get_global' cannot be expressed
# in the launch manifest").

# RUN: fusec run --target cpu %s --repeat 1 | FileCheck %s
# CHECK-NOT: MISMATCH
# CHECK: PASS

import torch


def model(x, mask):
    probs = torch.softmax(torch.where(mask, torch.full_like(x, float("-inf")), x), dim=-1)
    return probs + torch.ones(8, 64), x * 2 + torch.zeros_like(x)


example_inputs = (torch.randn(8, 64), torch.rand(8, 64) < 0.5)
