"""The fusec dialect, defined in Python with IRDL (`mlir.dialects.ext`).

    %r:2 = "fusec.group"() ({
      %0 = linalg.generic ... // the ops of one future kernel, using values from above
      "fusec.yield"(%0, %1) {operandSegmentSizes = array<i32: 1, 1, 0, 0>} : (tensor<8x4096xf32>, tensor<8x1xf32>) -> ()
    }) {fusec.id = 0, kind = "reduction", bytes_read = 278528, bytes_written = 131072, ...,
        resultSegmentSizes = array<i32: 1, 1, 0, 0>} : () -> (tensor<8x4096xf32>, tensor<8x1xf32>)

`fusec.group` marks the ops that become one kernel (like IREE's dispatch region): its region holds
them, its results are the values the kernel writes to memory, and its attributes carry the fusion
decision's figures (kind, bytes read and written, launches saved), so FileCheck tests and
`fusec explain` can read them. `fusec.yield` ends the region and names what the kernel writes.

Being IRDL-defined, the ops print in MLIR's generic form. IRDL gives every value of one variadic
operand or result the same type (its constraint variable binds to the first value's type), so a
kernel that writes values of different types (a row and its sum) lists them in runs of one type:
`TYPE_RUNS` variadic segments, whose sizes the `...SegmentSizes` attributes give. `type_runs` orders
values that way.
"""


from collections.abc import Sequence
from typing import Any

from fusec.mlir import ir
from torch_mlir.dialects import ext

__all__ = ["Fusec", "GroupOp", "YieldOp", "GROUP_KINDS", "TYPE_RUNS", "type_runs", "load_fusec_dialect"]

GROUP_KINDS = ("pointwise", "reduction", "scan", "contraction", "opaque")
_BYTE_ATTRS = ("bytes_read", "bytes_written")
TYPE_RUNS = 4  # the most distinct types a group's results may have (one variadic segment each)


class Fusec(ext.Dialect, name="fusec"):
    pass


class YieldOp(Fusec.Operation, name="yield", traits=[ir.IsTerminatorTrait]):
    values0: Sequence[ext.Operand[Any]]  # one run of values of one type each (see the module's doc)
    values1: Sequence[ext.Operand[Any]]
    values2: Sequence[ext.Operand[Any]]
    values3: Sequence[ext.Operand[Any]]


class GroupOp(Fusec.Operation, name="group"):
    kind: ir.StringAttr
    outs0: Sequence[ext.Result[Any]]  # one run of results of one type each (see the module's doc)
    outs1: Sequence[ext.Result[Any]]
    outs2: Sequence[ext.Result[Any]]
    outs3: Sequence[ext.Result[Any]]
    body: ext.Region

    def verify_invariants(self) -> bool:
        op = self.operation
        kind = ir.StringAttr(op.attributes["kind"]).value
        if kind not in GROUP_KINDS:
            return _fail(op, f"'fusec.group' kind must be one of {', '.join(GROUP_KINDS)}, not '{kind}'")
        for name in _BYTE_ATTRS:
            if name in op.attributes:
                attr = op.attributes[name]
                if not isinstance(attr, ir.IntegerAttr) or attr.value < 0:
                    return _fail(op, f"'fusec.group' attribute {name} must be a non-negative integer, "
                                     f"not {attr}")
        blocks = list(op.regions[0].blocks)
        if len(blocks) != 1:
            return _fail(op, f"'fusec.group' region must have exactly one block, not {len(blocks)}")
        if len(blocks[0].arguments):
            return _fail(op, "'fusec.group' region block takes no arguments (it uses values from above)")
        ops = list(blocks[0].operations)
        if not ops or ops[-1].operation.name != "fusec.yield":
            return _fail(op, "'fusec.group' region must end with 'fusec.yield'")
        yielded = [v.type for v in ops[-1].operands]
        results = [r.type for r in op.results]
        if yielded != results:
            return _fail(op, f"'fusec.yield' yields ({', '.join(map(str, yielded))}) but the group returns "
                             f"({', '.join(map(str, results))})")
        return True


def type_runs(values) -> tuple[list, list[int]]:
    """`values` reordered so that values of one type are adjacent (types in order of first
    appearance), and the segment sizes to give the group and its yield. Raises ValueError if they
    have more than TYPE_RUNS types."""
    by_type: dict = {}
    for v in values:
        by_type.setdefault(str(v.type), []).append(v)
    if len(by_type) > TYPE_RUNS:
        raise ValueError(f"a fusion group writes values of {len(by_type)} types; fusec.group holds at most "
                         f"{TYPE_RUNS} ({', '.join(by_type)})")
    runs = list(by_type.values())
    sizes = [len(r) for r in runs] + [0] * (TYPE_RUNS - len(runs))
    return [v for r in runs for v in r], sizes


def _fail(op, message: str) -> bool:
    op.location.emit_error(message)
    return False


def load_fusec_dialect(context) -> None:
    """Make the fusec dialect known to `context` (once per context)."""
    with context:
        if not context.is_dialect_loaded(Fusec.DIALECT_NAMESPACE):
            with ir.Location.unknown():
                Fusec.load()
