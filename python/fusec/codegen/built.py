"""What the passes after the lowering look up in the kernels it built: the gpu.launch ops, and the
loads of a kernel's inputs that the load-tagging knobs (`read_only_cache`, `l2_evict_last`) choose
among, by size."""

from __future__ import annotations

import math

from fusec.mlir import ir

__all__ = ["gpu_launches", "input_loads", "element_count"]


def gpu_launches(module_op) -> list:
    """Every gpu.launch in the module (the kernels, before outlining), in order."""
    launches = []
    module_op.walk(lambda op: (launches.append(op) if op.name == "gpu.launch" else None) or ir.WalkResult.ADVANCE)
    return launches


def input_loads(launch, outputs) -> tuple[list, float]:
    """The loads in a gpu.launch just built of global buffers the kernel does not write (`outputs`:
    the buffers it writes; stores add theirs), and the element count of its largest output: what
    the load-tagging knobs (`read_only_cache`, `l2_evict_last`) choose among, by size."""
    loads, written = [], list(outputs)

    def visit(op):
        name = op.operation.name
        if name in ("vector.load", "memref.load"):
            loads.append(op.operation)
        elif name in ("vector.store", "memref.store"):
            written.append(op.operation.operands[1])
        return ir.WalkResult.ADVANCE

    launch.operation.walk(visit)
    largest = max((element_count(b.type) for b in outputs), default=0)
    return [load for load in loads if isinstance(load.operands[0].type, ir.MemRefType)
            and ir.MemRefType(load.operands[0].type).memory_space is None
            and not any(load.operands[0] == w for w in written)], largest


def element_count(memref_type) -> float:
    """A buffer's element count, for comparing sizes: a dynamic size counts as many (infinite)."""
    shape = ir.MemRefType(memref_type).shape
    return math.inf if any(ir.ShapedType.is_dynamic_size(d) for d in shape) else math.prod(shape)

