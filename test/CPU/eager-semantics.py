# Special values on the cpu target, against eager: the semantic differences the OpInfo conformance
# suite found (python/fusec/conformance/), each fixed at its cause. A case prints `same` when fusec's
# outputs have eager's dtype, shape, NaNs and signs of zero and are close elsewhere.

# RUN: %python %s 2>&1 | FileCheck %s

import warnings

import torch

import fusec

warnings.simplefilter("ignore")
nan, inf = float("nan"), float("inf")
# Small rows (under 16 floats): eager's scalar loop, whose ties (-0.0 vs +0.0) give the first operand.
X = torch.tensor([nan, -0.0, 0.0, 1.0, -1.0, 2.0, nan, inf, -inf, 0.5, -0.0, 0.0])
Y = torch.tensor([0.0, 0.0, -0.0, nan, 2.0, -3.0, nan, 1.0, -inf, 0.5, -0.0, 1.0])
Z = torch.tensor([1.0, 1.0, 1.0, 1.0, nan, 1.0, 1.0, 1.0, 1.0, nan, 1.0, -0.0])
INTS = torch.tensor([-3, 0, 5, 1, 2, 7, 8, 9, 10, 11, 12, 13])


def same(out, ref) -> bool:
    if out.dtype != ref.dtype or out.shape != ref.shape:
        return False
    if not ref.dtype.is_floating_point:
        return torch.equal(out, ref)
    o, r = out.double(), ref.double()
    return bool(torch.equal(o.isnan(), r.isnan()) and torch.equal(o.signbit() & ~o.isnan(), r.signbit() & ~r.isnan())
                and torch.allclose(o.nan_to_num(), r.nan_to_num(), rtol=1e-5, atol=1e-6))


def check(name, fn, *args):
    refs = fn(*args)
    try:
        outs = fusec.compile(fn, args, target="cpu")(*args)
    except fusec.FusecError as err:
        print(f"{name}: {str(err).splitlines()[0]}")
        return
    outs, refs = (outs, refs) if isinstance(refs, tuple) else ((outs,), (refs,))
    print(f"{name}:", "same" if all(same(o, r) for o, r in zip(outs, refs)) else f"differs {outs} {refs}")


# NaN propagates through max and min, from either operand and from a bound.
# CHECK: maximum: same
# CHECK: minimum: same
# CHECK: clamp: same
# CHECK: clamp_nan_bound: same
# CHECK: clamp_tensor: same
# CHECK: clamp_min_max: same
# CHECK: hardtanh: same
check("maximum", torch.maximum, X, Y)
check("minimum", torch.minimum, X, Y)
check("clamp", lambda x: torch.clamp(x, 0.0, 1.0), X)
check("clamp_nan_bound", lambda x: torch.clamp(x, nan, 1.0), X)
check("clamp_tensor", torch.clamp, X, Y, Z)
check("clamp_min_max", lambda x, y, z: (torch.clamp_min(x, y), torch.clamp_max(x, z), torch.clamp_min(x, 0.0)), X, Y, Z)
check("hardtanh", torch.nn.functional.hardtanh, X)

# relu(-0.0) is -0.0 (eager's relu is clamp_min(x, 0)), also in rows eager vectorises.
# CHECK: relu: same
# CHECK: relu_long_row: same
check("relu", torch.relu, X)
check("relu_long_row", torch.relu, X.repeat(30))

# Integer tensors clamped by float tensors compute in float (was: an arith.cmpf on i64 operands).
# CHECK: clamp_int_by_float: same
# CHECK: clamp_int: same
check("clamp_int_by_float", torch.clamp, INTS, Y, Z)
check("clamp_int", lambda x: (torch.clamp(x, 0, 8), torch.maximum(x, x.flip(0))), INTS)

# reciprocal and 1 / x: inf at 0 (was refused: torch-mlir asserts x != 0 with a cf.assert).
# CHECK: reciprocal: same
# CHECK: one_over_x: same
# CHECK: reciprocal_int: same
check("reciprocal", torch.reciprocal, X)
check("one_over_x", lambda x: 1 / x, X)
check("reciprocal_int", torch.reciprocal, INTS)

# Variance where N <= correction: eager divides by max(0, N - correction), so 0 / 0 is NaN (was -0.0).
# CHECK: var_empty: same
# CHECK: var_mean_empty: same
# CHECK: var_correction_over_n: same
check("var_empty", lambda x: torch.var(x), torch.randn(0, 5))
check("var_mean_empty", lambda x: torch.var_mean(x, 0), torch.randn(0, 5))
check("var_correction_over_n", lambda x: torch.var(x, 1, correction=3), torch.randn(4, 2))

# 0-d inputs of softmax and of reductions over dim 0 or -1 (were "failed to legalize").
# CHECK: softmax_0d: same
# CHECK: reductions_0d: same
S = torch.tensor(1.5)
check("softmax_0d", lambda x: (torch.softmax(x, -1), torch.log_softmax(x, 0)), S)
check("reductions_0d", lambda x: (torch.amax(x, -1, True), torch.amin(x, 0), torch.var(x, 0)), S)

# Zero-size dims other than a dynamic dim 0 (the module failed to load at the first call).
# CHECK: empty_pointwise: same
# CHECK: empty_reductions: same
# CHECK: softmax_empty: same
E = torch.randn(3, 0, 4)
check("empty_pointwise", lambda x: x * 2 + 1, E)
check("empty_reductions", lambda x: (x.sum(1), torch.amax(x, 2), x.mean(2)), E)
check("softmax_empty", lambda x: torch.softmax(x, -1), torch.randn(5, 0, 0))

# layer_norm without a bias adds 0 as eager does: a one-element row with a negative weight is +0.0.
# CHECK: layer_norm_no_bias: same
check("layer_norm_no_bias", lambda x, w: torch.nn.functional.layer_norm(x, (1,), w), torch.randn(3, 1), -torch.ones(1))
