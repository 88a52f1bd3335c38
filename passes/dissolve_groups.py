"""--fusec-dissolve-groups: inline `fusec.group` regions, tagging each op with its group.

Bufferization does not know `fusec.group`, so before it the group's ops move back into the
function, each carrying `fusec.group = <id>` and `fusec.group_kind`; `--fusec-lower-groups-to-gpu`
later finds a kernel's ops by that tag.

Before:
    %r = "fusec.group"() ({ %1 = linalg.generic ...  "fusec.yield"(%1) ... }) {fusec.id = 0, kind = "pointwise"}
After:
    %1 = linalg.generic {..., fusec.group = 0 : i64, fusec.group_kind = "pointwise"} ...
"""

from __future__ import annotations

from fusec.mlir import ir

FLAG = "fusec-dissolve-groups"
SUMMARY = "Inline fusec.group regions, tagging their ops with the group id"


def tagged_groups(module_op) -> dict:
    """{group id: its ops, in order} of the ops this pass tagged (what the passes after bufferization read)."""
    groups: dict = {}
    module_op.walk(lambda op: (groups.setdefault(ir.IntegerAttr(op.attributes["fusec.group"]).value, []).append(op)
                               if "fusec.group" in op.attributes else None) or ir.WalkResult.ADVANCE)
    return groups


def run(module_op, pass_) -> None:
    groups = []
    module_op.walk(lambda op: (groups.append(op) if op.name == "fusec.group" else None) or ir.WalkResult.ADVANCE)
    for group in groups:
        gid = group.attributes["fusec.id"]
        kind = group.attributes["kind"]
        ops = list(group.regions[0].blocks[0].operations)
        terminator = ops[-1]
        for op in ops[:-1]:
            op.operation.move_before(group)
            op.attributes["fusec.group"] = gid
            op.attributes["fusec.group_kind"] = kind
        for result, value in zip(group.results, terminator.operands):
            result.replace_all_uses_with(value)
        group.erase()
