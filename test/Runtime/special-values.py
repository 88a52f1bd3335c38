# Special values on the GPU, against eager: NaN through max/min/clamp (the reductions' max.NaN.f32
# too), zero-size dims (no kernel is launched over an empty buffer), reciprocal at 0.

# REQUIRES: cuda
# RUN: %python %s | FileCheck %s

import torch

import fusec

nan, inf = float("nan"), float("inf")
X = torch.tensor([nan, -0.0, 0.0, 1.0, -1.0, 2.0, nan, inf, -inf, 0.5, -0.0, 0.0], device="cuda")
Y = torch.tensor([0.0, 0.0, -0.0, nan, 2.0, -3.0, nan, 1.0, -inf, 0.5, -0.0, 1.0], device="cuda")


def check(name, fn, *args):
    refs = fn(*args)
    outs = fusec.compile(fn, args)(*args)
    outs, refs = (outs, refs) if isinstance(refs, tuple) else ((outs,), (refs,))
    ok = all(o.shape == r.shape and torch.equal(o.isnan(), r.isnan())
             and torch.allclose(o.nan_to_num(), r.nan_to_num(), rtol=1e-5) for o, r in zip(outs, refs))
    print(f"{name}:", "same" if ok else f"differs {outs} {refs}")


# CHECK: min_max: same
# CHECK: softmax_nan: same
# CHECK: zero_size: same
# CHECK: reciprocal: same
check("min_max", lambda x, y: (torch.maximum(x, y), torch.minimum(x, y), torch.clamp(x, 0.0, 1.0), torch.relu(x)), X, Y)
check("softmax_nan", lambda x: torch.softmax(x, -1), torch.where(torch.rand(8, 4096, device="cuda") < 1e-3, nan, 1.0))
check("zero_size", lambda x: (x * 2 + 1, x.sum(1)), torch.randn(3, 0, 4, device="cuda"))
check("reciprocal", torch.reciprocal, X)
