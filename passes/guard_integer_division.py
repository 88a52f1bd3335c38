"""--fusec-guard-integer-division: integer division and remainder that never trap (the cpu target).

x86's `idiv` raises SIGFPE for a divisor of 0 and for the most negative integer divided by -1, and
the signal ends the process: `torch.remainder(i, j)` on the cpu target killed `fusec run` (a random
divisor of 0) and `floor_divide(-2**63, -1)` killed it on the example inputs, where eager gives
-2**63 (the quotient wraps) and a remainder of 0. Eager raises for a divisor of 0; the GPU's
division returns some value. So a divisor of 0 (and, signed, of -1) is replaced by 1 before the
division, and for -1 the results are made what they are: the quotient 0 - x (which wraps), the
remainder 0. A divisor that is a constant other than 0 and -1 (the index arithmetic of the loops)
is left alone. Scalars and vectors alike.

Runs on the cpu target after `arith-expand` (which makes floordivsi and ceildivsi these four ops)
and before `convert-arith-to-llvm`.

Before:
    %q = arith.divsi %x, %d : i64
After:
    %is0 = arith.cmpi eq, %d, %c0 : i64
    %ism1 = arith.cmpi eq, %d, %cm1 : i64
    %bad = arith.ori %is0, %ism1 : i1
    %safe = arith.select %bad, %c1, %d : i64
    %div = arith.divsi %x, %safe : i64
    %neg = arith.subi %c0, %x : i64
    %q = arith.select %ism1, %neg, %div : i64
"""

from __future__ import annotations

from fusec.codegen.indexing import splat_value
from fusec.mlir import ir
from torch_mlir.dialects import arith

FLAG = "fusec-guard-integer-division"
SUMMARY = "Make integer division by 0 (and signed by -1) not trap, with eager's results for -1"

_SIGNED = {"arith.divsi", "arith.remsi"}
_OPS = _SIGNED | {"arith.divui", "arith.remui"}


def _constant(like, n: int):
    element = like.element_type if isinstance(like, ir.ShapedType) else like
    attr = ir.IntegerAttr.get(element, n)
    if isinstance(like, ir.ShapedType):
        attr = ir.DenseElementsAttr.get_splat(like, attr)
    return arith.ConstantOp(like, attr).result


def _guard(op) -> None:
    x, d = op.operands
    signed = op.name in _SIGNED
    known = splat_value(d)
    if known is not None and known != 0 and not (signed and known in (-1, (1 << 64) - 1)):
        return
    t = d.type
    eq = arith.CmpIPredicate.eq
    with ir.InsertionPoint(op), op.location:
        zero, one = _constant(t, 0), _constant(t, 1)
        bad = arith.CmpIOp(eq, d, zero).result
        minus_one = None
        if signed:
            minus_one = arith.CmpIOp(eq, d, _constant(t, -1)).result
            bad = arith.OrIOp(bad, minus_one).result
        safe = arith.SelectOp(bad, one, d).result
        result = ir.Operation.create(op.name, results=[op.results[0].type], operands=[x, safe]).result
        if signed:
            exact = arith.SubIOp(zero, x).result if op.name == "arith.divsi" else zero
            result = arith.SelectOp(minus_one, exact, result).result
    op.results[0].replace_all_uses_with(result)
    op.erase()


def run(module_op, pass_) -> None:
    found = []
    module_op.walk(lambda op: (found.append(op) if op.name in _OPS else None) or ir.WalkResult.ADVANCE)
    for op in found:
        _guard(op)
