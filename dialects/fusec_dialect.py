"""The fusec dialect, defined in Python with IRDL (`mlir.dialects.ext`).

    %r:2 = "fusec.group"() ({
      %0 = linalg.generic ... // the ops of one future kernel, using values from above
      "fusec.yield"(%0, %1) : (tensor<...>, tensor<...>) -> ()
    }) {fusec.id = 0, kind = "reduction", bytes_read = 278528, bytes_written = 131072, ...}
       : () -> (tensor<...>, tensor<...>)

`fusec.group` marks the ops that become one kernel (like IREE's dispatch region): its region holds
them, its results are the values the kernel writes to memory, and its attributes carry the fusion
decision's figures (kind, bytes read and written, launches saved), so FileCheck tests and
`fusec explain` can read them. `fusec.yield` ends the region and names what the kernel writes.

Being IRDL-defined, the ops print in MLIR's generic form.
"""


from collections.abc import Sequence
from typing import Any

from fusec.mlir import ir
from torch_mlir.dialects import ext

__all__ = ["Fusec", "GroupOp", "YieldOp", "GROUP_KINDS", "load_fusec_dialect"]

GROUP_KINDS = ("pointwise", "reduction", "contraction", "opaque")
_BYTE_ATTRS = ("bytes_read", "bytes_written")


class Fusec(ext.Dialect, name="fusec"):
    pass


class YieldOp(Fusec.Operation, name="yield", traits=[ir.IsTerminatorTrait]):
    values: Sequence[ext.Operand[Any]]


class GroupOp(Fusec.Operation, name="group"):
    kind: ir.StringAttr
    outs: Sequence[ext.Result[Any]]
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


def _fail(op, message: str) -> bool:
    op.location.emit_error(message)
    return False


def load_fusec_dialect(context) -> None:
    """Make the fusec dialect known to `context` (once per context)."""
    with context:
        if not context.is_dialect_loaded(Fusec.DIALECT_NAMESPACE):
            with ir.Location.unknown():
                Fusec.load()
