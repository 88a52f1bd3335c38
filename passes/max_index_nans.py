"""--fusec-max-index-nans: the position of a max that is NaN is a NaN's position, as in eager.

torch-mlir computes `max_pool2d(..., return_indices=True)`'s indices in an op of its own after the
maxima: for each window element `e`, `select(e == max, its index, out)`, the first match kept. A
window holding a NaN has a NaN max (maximumf propagates it), and NaN == NaN is false, so no element
matched and the index stayed -1 where eager gives the NaN's position (a backward scattering to -1
would write out of bounds). Eager's loop (CPU and CUDA) updates its max and index where `e > max or e
is NaN`: the first of equal maxima, and the last NaN of a window. So the op's result is overridden by
the element's own index where the element is NaN; where the max is not NaN no element is, and nothing
changes.

The op rewritten is an elementwise-with-window reduction (a linalg.generic) whose body compares an
element with `oeq` against an operand read from an op that computes a max (a `linalg.generic` whose
body holds `arith.maximumf`, or a `linalg.pooling_*_max`, or a reshape of one), and selects an integer index with it.
Runs after --fusec-pooling-to-generic (which writes the maxima as such a generic).

Before:
    %eq = arith.cmpf oeq, %e, %max : f32
    %i = arith.select %eq, %index, %out : i64
    ... linalg.yield %r : i64
After:
    ... (unchanged)
    %nan = arith.cmpf uno, %e, %e : f32
    %r2 = arith.select %nan, %index, %r : i64
    linalg.yield %r2 : i64
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


def _index_select(cmp):
    """The `arith.select %cmp, %index, ...` of an integer index that uses `cmp`, or None."""
    for use in cmp.results[0].uses:
        user = use.owner
        if user.name == "arith.select" and use.operand_number == 0 and isinstance(user.results[0].type, ir.IntegerType):
            return user
    return None


def _rewrite(cmp, element, select) -> None:
    """Yield the element's own index where the element is NaN (the last NaN of the window stays)."""
    operations = cmp.operation.block.operations
    yield_op = operations[len(operations) - 1]
    if yield_op.name != "linalg.yield" or len(yield_op.operands) != 1 \
            or yield_op.operands[0].type != select.results[0].type:
        return
    with ir.InsertionPoint(yield_op), cmp.location:
        nan = arith.CmpFOp(arith.CmpFPredicate.UNO, element, element).result
        result = arith.SelectOp(nan, select.operands[1], yield_op.operands[0]).result
    yield_op.operands[0] = result


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
                    select = _index_select(inner)
                    if _max_operand(op, bound) and not _max_operand(op, element) and select is not None:
                        found.append((inner, element, select))
                        break
        return ir.WalkResult.ADVANCE

    module_op.walk(visit)
    for cmp, element, select in found:
        _rewrite(cmp, element, select)
