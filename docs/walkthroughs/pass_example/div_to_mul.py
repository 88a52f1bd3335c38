"""--fusec-div-to-mul: divide by a constant as a multiply by its reciprocal.

A division costs several times a multiply on a GPU. `x / c` for a constant `c` that is a power of
two equals `x * (1 / c)` exactly, so the rewrite never changes a result. (For other constants it
would round differently: those are left alone.)

Before:
    %c = arith.constant 4.096000e+03 : f32
    %y = arith.divf %x, %c : f32
After:
    %r = arith.constant 2.44140625E-4 : f32
    %y = arith.mulf %x, %r : f32
"""

from __future__ import annotations

import math

from fusec.mlir import ir
from torch_mlir.dialects import arith

FLAG = "fusec-div-to-mul"
SUMMARY = "Rewrite division by a power-of-two constant as multiplication by its reciprocal"


def _power_of_two(value: float) -> bool:
    mantissa, _ = math.frexp(value)
    return value != 0 and abs(mantissa) == 0.5


def run(module_op, pass_) -> None:
    divisions = []
    module_op.walk(lambda op: (divisions.append(op) if op.name == "arith.divf" else None)
                   or ir.WalkResult.ADVANCE)
    for div in divisions:
        divisor = div.operands[1].owner  # an op, or a block when the divisor is an argument
        if isinstance(divisor, ir.Block) or divisor.operation.name != "arith.constant":
            continue
        attr = divisor.attributes["value"]
        if not isinstance(attr, ir.FloatAttr) or not _power_of_two(attr.value):
            continue
        with ir.InsertionPoint(div), div.location:
            reciprocal = arith.constant(attr.type, ir.FloatAttr.get(attr.type, 1.0 / attr.value))
            product = arith.mulf(div.operands[0], reciprocal)
        div.results[0].replace_all_uses_with(product)
        div.erase()
