"""--fusec-one-plus-tanh: compute `1 + tanh(t)` as `2 / (1 + exp(-2t))` (and `1 - tanh(t)` as `2 / (1 + exp(2t))`).

GELU's tanh form, 0.5 * x * (1 + tanh(t)), is the one place models use tanh this way, and on a GPU
it is compute-bound in bf16: libdevice's tanhf is about 27 instructions, which is more than a bf16
element's share of the H200's issue rate at memory speed (bf16 GELU+bias ran at 75% of copy). The
two sides are equal (1 + tanh(t) = 2 * sigmoid(2t)), and the right one costs a multiply, an exp2
(PTX ex2.approx, as libdevice's tanhf uses), an add and an approximate divide (`fastmath<afn>`: PTX
div.approx.f32, 2 ulp): about 5 instructions. It is also
as accurate where it matters: 1 + tanh(t) near 0 (t very negative) loses no digits to cancellation,
and where tanh(t) is near 1 both sides round to 2. The limits hold: exp(-2t) overflows to inf for
t < -44 and 2 / inf is 0; a NaN stays NaN. A tanh used any other way is left alone (on its own, a
small tanh(t) needs its relative accuracy, which the exp form would lose).

Runs on the kernels (after --fusec-lower-groups-to-gpu), where a fused group's ops meet in one body.

Before:
    %th = math.tanh %t : vector<4xf32>
    %s = arith.addf %th, %one : vector<4xf32>
After:
    %m = arith.mulf %t, %minus_two_log2_e : vector<4xf32>
    %e = math.exp2 %m : vector<4xf32>
    %d = arith.addf %e, %one : vector<4xf32>
    %s = arith.divf %two, %d fastmath<afn> : vector<4xf32>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, math

FLAG = "fusec-one-plus-tanh"
SUMMARY = "Compute 1 + tanh(t) as 2 / (1 + exp(-2t)) and 1 - tanh(t) as 2 / (1 + exp(2t))"
LOG2_E = 1.4426950408889634  # exp(u) = exp2(u * log2(e)), the scaling libdevice's own tanhf does


def splat_value(value):
    """The float a constant (scalar or splat, or a broadcast of one) holds, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block):
        return None
    if owner.name in ("vector.broadcast", "vector.splat"):
        return splat_value(owner.operands[0])
    if owner.name != "arith.constant":
        return None
    attr = owner.attributes["value"]
    if isinstance(attr, ir.FloatAttr):
        return attr.value
    if isinstance(attr, ir.DenseFPElementsAttr) and attr.is_splat:
        return ir.FloatAttr(attr.get_splat_value()).value
    return None


def float_constant(value: float, like):
    element = like.element_type if isinstance(like, ir.ShapedType) else like
    attr = ir.FloatAttr.get(element, value)
    if isinstance(like, ir.ShapedType):
        attr = ir.DenseElementsAttr.get_splat(like, attr)
    return arith.ConstantOp(like, attr).result


def _sign_of_use(use) -> int | None:
    """+1 for `1 + tanh`, -1 for `1 - tanh`, None for any other use."""
    owner = use.owner
    operands = list(owner.operands)
    if owner.name == "arith.addf" and splat_value(operands[1 - use.operand_number]) == 1.0:
        return 1
    if owner.name == "arith.subf" and use.operand_number == 1 and splat_value(operands[0]) == 1.0:
        return -1
    return None


def run(module_op, pass_) -> None:
    tanhs = []
    module_op.walk(lambda op: (tanhs.append(op) if op.name == "math.tanh" else None) or ir.WalkResult.ADVANCE)
    afn = ir.Attribute.parse("#arith.fastmath<afn>")
    for tanh in tanhs:
        t = tanh.operands[0]
        for use in list(tanh.results[0].uses):
            sign = _sign_of_use(use)
            if sign is None:
                continue
            owner = use.owner
            with ir.InsertionPoint(owner), owner.location:
                scaled = arith.MulFOp(t, float_constant(-2.0 * LOG2_E * sign, t.type)).result
                denominator = arith.AddFOp(math.Exp2Op(scaled).result, float_constant(1.0, t.type)).result
                value = arith.DivFOp(float_constant(2.0, t.type), denominator, fastmath=afn).result
            owner.results[0].replace_all_uses_with(value)
            owner.erase()
        if not list(tanh.results[0].uses):
            tanh.erase()
