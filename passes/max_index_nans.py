"""--fusec-max-index-nans: the position of a max that is NaN is a NaN's position, as in eager.

torch-mlir computes `max_pool2d(..., return_indices=True)`'s indices in an op of its own after the
maxima: for each window element `e`, `select(e == max, its index, out)`, the first match kept. A
window holding a NaN has a NaN max (maximumf propagates it), and NaN == NaN is false, so no element
matched and the index stayed -1 where eager gives the NaN's position (a backward scattering to -1
would write out of bounds). The comparison becomes `e == max or e is NaN`: where the max is not NaN
no element is NaN, so nothing else changes; where it is, the first NaN of the window is taken (eager
takes the last of several NaNs: a window with two or more NaNs is the one difference left).

The op rewritten is an elementwise-with-window reduction (a linalg.generic) whose body compares an
element with `oeq` against an operand read from an op that computes a max (a `linalg.generic` whose
body holds `arith.maximumf`, or a `linalg.pooling_*_max`, or a reshape of one), and selects an integer index with it.
Runs after --fusec-pooling-to-generic (which writes the maxima as such a generic).

Before:
    %eq = arith.cmpf oeq, %e, %max : f32
    %i = arith.select %eq, %index, %out : i64
After:
    %eq0 = arith.cmpf oeq, %e, %max : f32
    %nan = arith.cmpf uno, %e, %e : f32
    %eq = arith.ori %eq0, %nan : i1
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith

FLAG = "fusec-max-index-nans"
SUMMARY = "Take a NaN's position as the position of a NaN max (max_pool's indices)"


def _computes_max(value) -> bool:
    owner = value.owner
    while not isinstance(owner, ir.Block) and owner.name in ("tensor.expand_shape", "tensor.collapse_shape"):
        owner = owner.operands[0].owner  # a 1-D pool's unit dim, expanded back
    if isinstance(owner, ir.Block):
        return False
    if owner.name.startswith("linalg.pooling_") and owner.name.endswith("_max"):
        return True
    if owner.name != "linalg.generic":
        return False
    return any(op.name == "arith.maximumf" for op in owner.regions[0].blocks[0].operations)


def _max_operand(generic, value) -> bool:
    """Whether body value `value` of `generic` is an input read from an op that computes a max."""
    if not isinstance(value.owner, ir.Block) or value.owner != generic.regions[0].blocks[0]:
        return False
    j = value.arg_number
    inputs = list(generic.opview.inputs)
    return j < len(inputs) and _computes_max(inputs[j])


def _selects_index(cmp) -> bool:
    return any(use.owner.name == "arith.select" and isinstance(use.owner.results[0].type, ir.IntegerType)
               for use in cmp.results[0].uses)


def _rewrite(cmp, element) -> None:
    with ir.InsertionPoint(cmp), cmp.location:
        nan = arith.CmpFOp(arith.CmpFPredicate.UNO, element, element).result
    with ir.InsertionPoint.after(cmp), cmp.location:
        either = arith.OrIOp(cmp.results[0], nan)
    for use in list(cmp.results[0].uses):
        if use.owner != either.operation:
            use.owner.operands[use.operand_number] = either.result


def run(module_op, pass_) -> None:
    found = []

    def visit(op):
        if op.name == "linalg.generic":
            for inner in op.regions[0].blocks[0].operations:
                if inner.name != "arith.cmpf" or \
                        ir.IntegerAttr(inner.attributes["predicate"]).value != int(arith.CmpFPredicate.OEQ):
                    continue
                a, b = inner.operands
                for element, bound in ((a, b), (b, a)):
                    if _max_operand(op, bound) and not _max_operand(op, element) and _selects_index(inner):
                        found.append((inner, element))
                        break
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    for cmp, element in found:
        _rewrite(cmp, element)
