"""The decompositions fusec imports with: torch-mlir's FX table, plus fusec's own where torch-mlir's
lowering of an ATen op differs from eager PyTorch or fails (each found by the fuzzer or by the OpInfo
conformance suite, python/fusec/conformance/).

A decomposition returns NotImplemented where the op needs none (the op is then decomposed or lowered
as before); the ops it emits are decomposed again, so one that calls its own op on other arguments
returns NotImplemented for those.
"""

from __future__ import annotations

import math

import torch
from torch._decomp import get_decompositions
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
from torch_mlir.extras.fx_decomp_util import get_decomposition_table

__all__ = ["decompositions"]

aten = torch.ops.aten


def decompositions() -> dict:
    """torch-mlir's FX decompositions, plus PyTorch's own for (log-)softmax (amax, sub, exp, sum):
    torch-mlir's C++ decomposition of softmax would hide the max inside one opaque op; and for
    GELU: torch-mlir's tanh form uses 0.797724 for sqrt(2/pi) = 0.7978846 (found by `fusec fuzz`:
    a relative error of 3e-5 at x = 1.5); plus the NaN-propagating max/min family below."""
    return {**get_decomposition_table(), **get_decompositions([aten._softmax, aten._log_softmax, aten.gelu]),
            aten.sum.dim_IntList: _accumulate_in_fp32(aten.sum.dim_IntList),
            aten.mean.dim: _accumulate_in_fp32(aten.mean.dim),
            aten.where.self: _where_same_branches,
            **_MIN_MAX}


def _accumulate_in_fp32(op):
    """A sum or mean of bf16/fp16 values accumulates in fp32 and rounds once, as PyTorch's kernels
    do; lowered as written, it would round every partial sum (found by `fusec fuzz`: a bf16 sum of
    1001 values off by 3%). Other dtypes: no decomposition (NotImplemented)."""
    def decomposition(x, dim=None, keepdim=False, *, dtype=None):
        if x.dtype not in (torch.bfloat16, torch.float16) or dtype is not None:
            return NotImplemented
        return op(x.to(torch.float32), dim, keepdim).to(x.dtype)

    return decomposition


def _where_same_branches(condition, x, y):
    """`where(c, y, y)` is `y` broadcast to c's shape. torch-mlir folds it to `y` alone and then
    cannot cast y's shape to the result's (found by `fusec fuzz`: "'tensor.cast' op ... cast
    incompatible"), so it is rewritten here. Other wheres: no decomposition (NotImplemented)."""
    if x is not y:
        return NotImplemented
    return aten.expand.default(y, torch.broadcast_shapes(condition.shape, y.shape)).clone()


# --- max and min: NaN propagates, as in eager -------------------------------------------------------
# torch-mlir lowers maximum, minimum, clamp (scalar and tensor bounds), clamp_min, clamp_max and relu
# to one compare and a select (`x < lo ? lo : x` with an unordered `ult`, `a > b ? a : b` with an
# ordered `ogt`), which drops a NaN of one operand: clamp(nan, 0, 1) was 0, maximum(nan, 0) was 0,
# clamp(-1, nan, 1) was 1. Eager propagates a NaN of either operand. Here max(a, b) is
# `where((a < b) | isnan(b), b, a)`: b where it wins or is NaN, else a (NaN if a is); no NaN test is
# needed of a Python number. On a tie (-0.0 and +0.0) it gives a, as eager's scalar loop (std::max)
# does: clamp and relu keep x's zero (relu(-0.0) is -0.0: eager's relu is clamp_min(x, 0)). Eager's
# vectorised loop (rows of 16 floats and more) gives the second operand of maximum/minimum and of a
# tensor-bound clamp on a tie, so those can differ from it there by the sign of zero only.
# Integer ops need none of this (no NaN): NotImplemented, torch-mlir's integer lowering is kept.


def _pick(b, a, b_wins):
    """b where `b_wins` (a tensor) or b is NaN, else a (a tensor); b may be a Python number."""
    if not isinstance(b, torch.Tensor):
        # A NaN bound makes every element NaN: x + nan, which still reads x (a constant output cannot
        # be launched).
        return a + b if math.isnan(b) else torch.where(b_wins, b, a)
    return torch.where(b_wins | torch.isnan(b), b, a)


def _max(a, b):
    """eager's maximum(a, b): NaN from either; a on a tie. `a` is a tensor."""
    return _pick(b, a, a < b)


def _min(a, b):
    """eager's minimum(a, b): NaN from either; a on a tie. `a` is a tensor."""
    return _pick(b, a, a > b)


def _float_operands(*args):
    """The operands cast to the op's result dtype (Python numbers kept), or None when that dtype is not
    floating (or an operand is missing: torch's own handling is kept)."""
    present = [a for a in args if a is not None]
    _, dtype = elementwise_dtypes(*present, type_promotion_kind=ELEMENTWISE_TYPE_PROMOTION_KIND.DEFAULT)
    if not dtype.is_floating_point:
        return None
    return [a.to(dtype) if isinstance(a, torch.Tensor) and a.dtype != dtype else a for a in args]


def _clamp(x, low=None, high=None):
    """clamp: eager's min(max(x, low), high)."""
    if low is None and high is None:
        return NotImplemented
    cast = _float_operands(x, low, high)
    if cast is None:
        return NotImplemented
    x, low, high = cast
    if low is not None:
        x = _max(x, low)
    return x if high is None else _min(x, high)


def _binary(fn):
    def decomposition(a, b):
        cast = _float_operands(a, b)
        return NotImplemented if cast is None else fn(*cast)

    return decomposition


def _relu(x):
    return _max(x, 0.0) if x.dtype.is_floating_point else NotImplemented


_MIN_MAX = {
    aten.maximum.default: _binary(_max), aten.minimum.default: _binary(_min),
    aten.clamp.default: _clamp, aten.clamp.Tensor: _clamp,
    aten.clamp_min.default: lambda x, low: _clamp(x, low, None), aten.clamp_min.Tensor: _binary(_max),
    aten.clamp_max.default: lambda x, high: _clamp(x, None, high), aten.clamp_max.Tensor: _binary(_min),
    aten.hardtanh.default: lambda x, low=-1.0, high=1.0: _clamp(x, low, high),
    aten.relu.default: _relu,
}
