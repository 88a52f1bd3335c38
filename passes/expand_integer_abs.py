"""--fusec-expand-integer-abs: compute `math.absi x` as `max(x, 0 - x)` (arith.maxsi, arith.subi).

torch.abs on an integer tensor (T5's relative position buckets take it of int64 positions) imports
as `math.absi`, which neither target lowers: the cpu target's `convert-math-to-libm` marks it
illegal (libm has no integer abs it may call) and the cuda target's `convert-gpu-to-nvvm` leaves it
to MLIR's LLVM IR translation, which has no translation for the math dialect and fails (and then
crashed the process in the Python bindings). Two integer ops every back end has are the same
function: `0 - x` wraps for the most negative integer, so abs(INT_MIN) is INT_MIN, as in PyTorch
(and as `llvm.intr.abs` with `is_int_min_poison = false`).

Runs where each target expands the math ops it cannot lower (before `convert-math-to-libm` on the
cpu target, before `convert-gpu-to-nvvm` on the cuda target). Scalars and vectors alike.

Before:
    %a = math.absi %x : vector<2xi64>
After:
    %zero = arith.constant dense<0> : vector<2xi64>
    %n = arith.subi %zero, %x : vector<2xi64>
    %a = arith.maxsi %x, %n : vector<2xi64>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith

FLAG = "fusec-expand-integer-abs"
SUMMARY = "Compute math.absi x as max(x, 0 - x), which every target lowers"


def _zero(like):
    element = like.element_type if isinstance(like, ir.ShapedType) else like
    attr = ir.IntegerAttr.get(element, 0)
    if isinstance(like, ir.ShapedType):
        attr = ir.DenseElementsAttr.get_splat(like, attr)
    return arith.ConstantOp(like, attr).result


def run(module_op, pass_) -> None:
    found = []
    module_op.walk(lambda op: (found.append(op) if op.name == "math.absi" else None) or ir.WalkResult.ADVANCE)
    for absi in found:
        x = absi.operands[0]
        with ir.InsertionPoint(absi), absi.location:
            value = arith.MaxSIOp(x, arith.SubIOp(_zero(x.type), x).result).result
        absi.results[0].replace_all_uses_with(value)
        absi.erase()
