"""--fusec-simplify-powers: a power by a constant exponent of 2, 3, 1/2, -1/2, -1 or -2 as the
multiplies, square root or reciprocal it is, as PyTorch's own kernels compute it.

torch-mlir lowers `aten.pow` and `linalg_vector_norm` (`F.normalize`, `torch.norm`) to `math.powf`
with a constant exponent: `|x| ** 2.0` for every element of a 2-norm, `s ** 0.5` for its result. On
the GPU `math.powf` is libdevice's `__nv_powf`, some forty instructions with its special cases: in a
kernel that streams rows that is more than an element's share of the issue rate at memory speed
(`F.normalize` over 65536x1024 ran at 35% of copy in bf16, 67% in fp32, on the H200). PyTorch's CUDA
`pow` computes these exponents as `x * x`, `x * x * x`, `sqrt`, `rsqrt`, `1 / x` and `1 / (x * x)`
(`pow_tensor_scalar_optimized_kernel`), so the rewrite gives eager's numbers. Any other exponent,
and a power whose exponent is not a constant, is left alone.

Runs on the kernels (after --fusec-lower-groups-to-gpu), where a fused group's ops meet in one body.

Before:
    %two = arith.constant dense<2.0> : vector<4xf32>
    %p = math.powf %x, %two : vector<4xf32>
After:
    %p = arith.mulf %x, %x : vector<4xf32>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, math

from .one_plus_tanh import float_constant, splat_value

FLAG = "fusec-simplify-powers"
SUMMARY = "Compute x ** c for c in 2, 3, 1/2, -1/2, -1, -2 as multiplies, sqrt, rsqrt or a reciprocal"


def _power(x, exponent: float):
    """`x ** exponent` without math.powf, or None for an exponent this pass leaves alone."""
    if exponent == 2.0:
        return arith.MulFOp(x, x).result
    if exponent == 3.0:
        return arith.MulFOp(arith.MulFOp(x, x).result, x).result
    if exponent == 0.5:
        return math.SqrtOp(x).result
    if exponent == -0.5:
        return math.RsqrtOp(x).result
    if exponent == -1.0:
        return arith.DivFOp(float_constant(1.0, x.type), x).result
    if exponent == -2.0:
        return arith.DivFOp(float_constant(1.0, x.type), arith.MulFOp(x, x).result).result
    return None


def run(module_op, pass_) -> None:
    powers = []
    module_op.walk(lambda op: (powers.append(op) if op.name == "math.powf" else None) or ir.WalkResult.ADVANCE)
    for power in powers:
        exponent = splat_value(power.operands[1])
        if exponent is None:
            continue
        with ir.InsertionPoint(power), power.location:
            value = _power(power.operands[0], exponent)
        if value is None:
            continue
        power.results[0].replace_all_uses_with(value)
        power.erase()
