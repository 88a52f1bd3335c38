"""--fusec-bound-gather-indices: a gather's index checks become a clamp into the tensor's bounds.

torch-mlir lowers `embedding`, `index_select`, `gather` and tensor indexing to an all-parallel
linalg.generic whose body reads its table at indices computed from data (`tensor.extract
%table[%id, %j]`), after asserting that each such index is in range (`cf.assert`, which no fusec
target lowers: a kernel cannot raise). Eager PyTorch raises on an index out of range (on the GPU a
device-side assert that also ends the CUDA context); a fusec kernel instead reads the nearest element
in bounds: the index is clamped to [0, size - 1], so no kernel reads outside its buffer, and the
asserts go. Only asserts that check an index the body extracts with are erased
(`is_index_bound_assert`, which the linalg stage's check also uses); any other `cf.assert` stays and
is refused by name. An index computed from the loop indices alone (a slice, a flip) is in bounds by
construction and is left as it is (--fusec-extracts-to-index-maps makes it an index map).

Before:
    %i = arith.index_cast %id : i64 to index
    %ok = arith.cmpi slt, %i, %c1000 : index
    cf.assert %ok, "index must be smaller than dim size"
    %v = tensor.extract %table[%i, %j] : tensor<1000x64xf32>
After:
    %i = arith.index_cast %id : i64 to index
    %lo = arith.maxsi %i, %c0 : index
    %in = arith.minsi %lo, %c999 : index
    %v = tensor.extract %table[%in, %j] : tensor<1000x64xf32>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith

__all__ = ["depends_on_data", "is_index_bound_assert"]

FLAG = "fusec-bound-gather-indices"
SUMMARY = "Clamp a gather's data-dependent indices into bounds in place of torch-mlir's asserts"


def _body(op):
    return op.regions[0].blocks[0]


def depends_on_data(value, body, seen=None) -> bool:
    """Whether `value` (in `body`) is computed from a block argument (an element of an input)."""
    seen = set() if seen is None else seen
    if isinstance(value.owner, ir.Block):
        return value.owner == body
    op = value.owner
    if op.parent is None or op.parent.regions[0].blocks[0] != body or op in seen:
        return False
    seen.add(op)
    return any(depends_on_data(v, body, seen) for v in op.operands)


def _data_indices(body) -> set:
    """The values the body's tensor.extracts use as data-dependent indices, with the i64 values they
    were cast from (`arith.index_cast`)."""
    found = set()
    for inner in body.operations:
        if inner.name == "tensor.extract":
            for v in list(inner.operands)[1:]:
                if depends_on_data(v, body):
                    found.add(v)
                    if not isinstance(v.owner, ir.Block) and v.owner.name == "arith.index_cast":
                        found.add(v.owner.operands[0])
    return found


def is_index_bound_assert(op) -> bool:
    """Whether `op` is a `cf.assert` in a linalg body that checks, by one comparison with a constant, an
    index the body reads a tensor at."""
    if op.name != "cf.assert" or op.parent is None or op.parent.name != "linalg.generic":
        return False
    cond = op.operands[0]
    if isinstance(cond.owner, ir.Block) or cond.owner.name != "arith.cmpi":
        return False
    return any(v in _data_indices(_body(op.parent)) for v in cond.owner.operands)


def _clamp(value, size: int):
    index = ir.IndexType.get()
    zero = arith.ConstantOp(index, 0).result
    last = arith.ConstantOp(index, size - 1).result
    return arith.MinSIOp(arith.MaxSIOp(value, zero).result, last).result


def _bound(op) -> None:
    body = _body(op)
    for inner in list(body.operations):
        if inner.name == "cf.assert" and is_index_bound_assert(inner):
            cond = inner.operands[0].owner
            inner.erase()
            if not len(list(cond.results[0].uses)):
                cond.erase()
    for inner in list(body.operations):
        if inner.name != "tensor.extract":
            continue
        shape = ir.RankedTensorType(inner.operands[0].type).shape
        for k, v in enumerate(list(inner.operands)[1:]):
            if depends_on_data(v, body) and shape[k] != ir.ShapedType.get_dynamic_size():
                with ir.InsertionPoint(inner), inner.location:
                    inner.operands[k + 1] = _clamp(v, shape[k])


def run(module_op, pass_) -> None:
    generics = []
    module_op.walk(lambda op: (generics.append(op) if op.name == "linalg.generic" else None) or ir.WalkResult.ADVANCE)
    for op in generics:
        if any(inner.name == "tensor.extract" for inner in _body(op).operations):
            _bound(op)
