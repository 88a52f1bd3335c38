"""The decompositions fusec imports with: torch-mlir's FX table, plus fusec's own where torch-mlir's
lowering of an ATen op differs from eager PyTorch or fails (each found by the fuzzer or by the OpInfo
conformance suite, python/fusec/conformance/).

A decomposition returns NotImplemented where the op needs none (the op is then decomposed or lowered
as before); the ops it emits are decomposed again, so one that calls its own op on other arguments
(a 0-d input made 1-d) returns NotImplemented for those.
"""

from __future__ import annotations

import math

import torch
from torch._decomp import get_decompositions
from torch._prims_common import ELEMENTWISE_TYPE_PROMOTION_KIND, elementwise_dtypes
from torch_mlir.extras.fx_decomp_util import get_decomposition_table

from .attention_math import ATTENTION_DECOMPOSITIONS

__all__ = ["decompositions"]

aten = torch.ops.aten


def decompositions(target: str = "cpu") -> dict:
    """torch-mlir's FX decompositions, plus PyTorch's own for (log-)softmax (amax, sub, exp, sum):
    torch-mlir's C++ decomposition of softmax would hide the max inside one opaque op; and for
    GELU: torch-mlir's tanh form uses 0.797724 for sqrt(2/pi) = 0.7978846 (found by `fusec fuzz`:
    a relative error of 3e-5 at x = 1.5); plus the NaN-propagating max/min family, the variance
    divisor, 0-d reductions, reciprocal, integer floor division, as_strided as a reshape and
    layer_norm's sign of zero below, and attention's fused-kernel ops as its math (attention_math.py).
    `target`: the device
    whose eager semantics to follow where the two differ (relu's sign of zero)."""
    table, torch_own = get_decomposition_table(), get_decompositions([aten._softmax, aten._log_softmax, aten.gelu])
    return {**table, **torch_own,
            aten._softmax.default: _softmax_like(torch_own[aten._softmax.default]),
            aten._log_softmax.default: _softmax_like(torch_own[aten._log_softmax.default]),
            aten.sum.dim_IntList: _accumulate_in_fp32(aten.sum.dim_IntList),
            aten.mean.dim: _accumulate_in_fp32(aten.mean.dim),
            aten.where.self: _where_same_branches,
            **_MIN_MAX, **_ZERO_D_REDUCTIONS, **ATTENTION_DECOMPOSITIONS,
            aten.var.correction: _variance(aten.var.correction),
            aten.var_mean.correction: _variance(aten.var_mean.correction),
            aten.reciprocal.default: _reciprocal,
            aten.as_strided.default: _as_strided_reshape,
            aten.div.Tensor_mode: _integer_floor_division, aten.div.Scalar_mode: _integer_floor_division,
            aten.native_layer_norm.default: _layer_norm_adds_zero(table[aten.native_layer_norm.default]),
            **({aten.relu.default: _relu_as_cuda} if target == "cuda" else {})}


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
# does: clamp and relu keep x's zero (relu(-0.0) is -0.0 on the CPU: eager's relu is clamp_min(x, 0);
# CUDA's is threshold, +0.0, and the cuda target follows it: _relu_as_cuda). Eager's
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
    """The CPU's eager relu: clamp_min(x, 0), which keeps x's zero (relu(-0.0) is -0.0)."""
    return _max(x, 0.0) if x.dtype.is_floating_point else NotImplemented


def _relu_as_cuda(x):
    """CUDA's eager relu: threshold(x, 0, 0), `x <= 0 ? 0 : x`, which gives +0.0 for -0.0 (and NaN
    for NaN): the devices differ in the sign of zero only (found by the cuda conformance run)."""
    return torch.where(x <= 0, 0.0, x) if x.dtype.is_floating_point else NotImplemented


_MIN_MAX = {
    aten.maximum.default: _binary(_max), aten.minimum.default: _binary(_min),
    aten.clamp.default: _clamp, aten.clamp.Tensor: _clamp,
    aten.clamp_min.default: lambda x, low: _clamp(x, low, None), aten.clamp_min.Tensor: _binary(_max),
    aten.clamp_max.default: lambda x, high: _clamp(x, None, high), aten.clamp_max.Tensor: _binary(_min),
    aten.hardtanh.default: lambda x, low=-1.0, high=1.0: _clamp(x, low, high),
    aten.relu.default: _relu,
}


# --- reductions of a 0-d tensor -----------------------------------------------------------------------
# Eager reduces a 0-d tensor over dim 0 or -1 (as if it had one element); torch-mlir's lowering of
# amax/amin does not take a dim of a 0-d tensor ("failed to legalize torch.constant.int"), and var
# crashes. The 0-d input is reduced as a 1-element tensor and the 0-d result shaped back.


def _on_one_element(op, x, dim, *args, **kwargs):
    """op over the 1-element tensor x is, its result(s) 0-d again."""
    out = op(x.reshape(1), [0] if isinstance(dim, (list, tuple)) else 0, *args, **kwargs)
    return tuple(o.reshape(()) for o in out) if isinstance(out, tuple) else out.reshape(())


def _reduction_of_0d(op):
    def decomposition(x, dim=(), keepdim=False):
        if x.dim() != 0:
            return NotImplemented
        return _on_one_element(op, x, dim, keepdim)

    return decomposition


def _scan(op):
    """A running sum or product of a 0-d tensor (its own value) has no lowering in torch-mlir, nor a
    running product into another dtype (`cumprod(x, -1, dtype=torch.float64)`): the one is taken as
    one element, the other casts first, as PyTorch defines `dtype`."""
    def decomposition(x, dim, *, dtype=None):
        if x.dim() == 0:
            return _on_one_element(op, x, dim, dtype=dtype)
        if dtype is not None and dtype != x.dtype:
            return op(x.to(dtype), dim)
        return NotImplemented

    return decomposition


_ZERO_D_REDUCTIONS = {aten.amax.default: _reduction_of_0d(aten.amax.default),
                      aten.amin.default: _reduction_of_0d(aten.amin.default),
                      aten.cumsum.default: _scan(aten.cumsum.default),
                      aten.cumprod.default: _scan(aten.cumprod.default)}


def _softmax_like(torch_decomposition):
    """(log-)softmax: PyTorch's decomposition, but a 0-d input is taken as 1 element (its amax over
    dim -1 has no lowering) and an empty input gives its empty result at once (PyTorch's
    decomposition concatenates a -inf column, whose `empty_strided` torch-mlir cannot lower)."""
    def decomposition(x, dim, half_to_float):
        if x.dim() == 0:
            return _on_one_element(torch_decomposition, x, dim, half_to_float)
        if x.numel() == 0:
            return x.to(torch.float32 if half_to_float else x.dtype).clone()
        return torch_decomposition(x, dim, half_to_float)

    return decomposition


# --- variance ---------------------------------------------------------------------------------------


def _variance(op):
    """var/var_mean: eager divides the sum of squares by max(0, N - correction); torch-mlir by
    N - correction, so where N < correction (an empty dim: N = 0) 0 / -1 gave -0.0 where eager's 0 / 0
    is NaN. There the correction is made N (the divisor 0). A 0-d input is reduced as 1 element."""
    def decomposition(x, dim=None, *, correction=None, keepdim=False):
        if x.dim() == 0:
            return _on_one_element(op, x, dim if dim is not None else [0], correction=correction, keepdim=keepdim)
        dims = range(x.dim()) if dim is None or len(dim) == 0 else dim
        n = math.prod(x.shape[d] for d in dims)
        c = 1 if correction is None else correction
        if not isinstance(n, int) or n >= c:  # a dynamic row count: torch-mlir's divisor kept
            return NotImplemented
        return op(x, dim, correction=n, keepdim=keepdim)

    return decomposition


# --- reciprocal and layer_norm ----------------------------------------------------------------------


def _reciprocal(x):
    """1 / x. torch-mlir's lowering asserts x != 0 (`cf.assert`, which no fusec target lowers); eager
    gives inf (and an integer x a float result, as true division does)."""
    return aten.div.Tensor(torch.ones((), dtype=x.dtype, device=x.device), x)


def _integer_floor_division(a, b, rounding_mode=None):
    """Floor division of integers (`floor_divide`, `//`, `div(rounding_mode="floor")`) in integers:
    the truncated quotient, one less where the remainder is not 0 and its sign differs from the
    divisor's. torch-mlir divides in f64 and floors, which fusec-narrow-f64 then makes f32 (in a
    model without f64 tensors): wrong past 2^24 (and past 2^53 before narrowing). Floats, and the
    other rounding modes: NotImplemented."""
    numbers = (a, b)
    if rounding_mode != "floor" or any(isinstance(x, float) or (isinstance(x, torch.Tensor) and (
            x.dtype.is_floating_point or x.dtype.is_complex or x.dtype == torch.bool)) for x in numbers):
        return NotImplemented
    q = torch.div(a, b, rounding_mode="trunc")
    r = a - q * b
    b_negative = (b < 0) if isinstance(b, torch.Tensor) else bool(b < 0)
    return torch.where((r != 0) & ((r < 0) != b_negative), q - 1, q)


def _as_strided_reshape(x, size, stride, storage_offset=None):
    """as_strided that reads a contiguous tensor in its own order (the contiguous strides of `size`,
    offset 0, every element) is a reshape: a view. torch-mlir lowers as_strided as a gather through
    index tensors it computes at compile time, constants the kernels cannot read (host globals,
    `memref.get_global`): PyTorch's GroupNorm decomposition for CPU tensors reshapes its per-channel
    scale and shift so (`w.contiguous().as_strided([N, C], [C, 1])`), and `GroupNorm(32, 512)` did
    not compile for the GPU. Symbolic sizes (a dynamic batch) where the checks hold for every value
    of the symbols; other as_strided calls: NotImplemented."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true as known

    sizes = [*size, *stride, storage_offset or 0, x.storage_offset(), x.numel()]
    if not all(isinstance(n, (int, torch.SymInt)) for n in sizes) or not known((storage_offset or 0) == 0) \
            or not known(x.storage_offset() == 0) or not x.is_contiguous() or not known(math.prod(size) == x.numel()):
        return NotImplemented
    expected = 1
    for n, s in reversed(list(zip(size, stride))):
        if not known(n == 1) and not known(s == expected):
            return NotImplemented
        expected *= n
    return aten.view.default(x, list(size))


def _layer_norm_adds_zero(torch_decomposition):
    """Without a bias eager still adds one of 0 (`(x * rstd - mean * rstd) * w + 0`): a zero result is
    +0.0 even where w < 0. PyTorch's decomposition adds nothing, and gave -0.0 (a row of one element:
    (x - mean) * rstd * w is 0 * w). Its output adds 0.0 here, as eager's does."""
    def decomposition(x, normalized_shape, weight, bias, eps):
        out, mean, rstd = torch_decomposition(x, normalized_shape, weight, bias, eps)
        return (out if bias is not None else out + 0.0), mean, rstd

    return decomposition
