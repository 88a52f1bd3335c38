"""--fusec-static-kernel-buffers: kernels get static buffers, and a dynamic row count as a value.

fusec's kernels take bare pointers (convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1}): the
runtime passes a tensor's address and nothing else, so a memref whose size is only known at run time
(`memref<?x4096xf32>`, a model compiled with a dynamic row count) cannot enter a kernel as it is.
It does not have to. Only the outermost dim may be dynamic (the frontend refuses any other), so the
buffer's strides are static and no address inside the kernel depends on the row count; what does (the
grid, the guard of a flat kernel's last block) takes it as a value, computed on the host. This pass,
run on each gpu.launch after gpu-launch-sink-index-computations and before outlining:

  1. moves every `memref.dim` of a buffer from outside the launch back in front of it (the sinking
     pass moves them into the kernel, where a bare pointer has no sizes): the kernel then gets the
     size as an index argument;
  2. casts each dynamic buffer the kernel uses to a static type (`memref.cast`, no copy) whose
     outermost extent is `ROWS_BOUND`, a bound that only the type sees, and the kernel uses the cast.

Before:
    gpu.launch blocks(%bx, ...) in (%gx = %n, ...) ... {
      %c0 = arith.constant 0 : index
      %d = memref.dim %x, %c0 : memref<?x4096xf32>
      %v = vector.load %x[%row, %col] : memref<?x4096xf32>, vector<4xf32>
After:
    %d = memref.dim %x, %c0 : memref<?x4096xf32>
    %xs = memref.cast %x : memref<?x4096xf32> to memref<2147483648x4096xf32>
    gpu.launch blocks(%bx, ...) in (%gx = %n, ...) ... {
      %v = vector.load %xs[%row, %col] : memref<2147483648x4096xf32>, vector<4xf32>
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, memref

from fusec.codegen.built import gpu_launches

FLAG = "fusec-static-kernel-buffers"
SUMMARY = "Give kernels static buffer types (a bound for a dynamic row count) and dynamic sizes as values"

ROWS_BOUND = 1 << 31  # the outermost extent a dynamic buffer gets inside a kernel (2^31 rows)
_DYNAMIC = ir.ShapedType.get_dynamic_size()


def _inside(value, launch) -> bool:
    """Is `value` defined in `launch`'s region?"""
    owner = value.owner
    op = owner.owner if isinstance(owner, ir.Block) else owner.operation
    while op is not None:
        if op == launch.operation:
            return True
        op = op.parent
    return False


def _ops_of(launch) -> list:
    ops = []
    launch.operation.walk(lambda op: (ops.append(op) if op != launch.operation else None) or ir.WalkResult.ADVANCE)
    return ops


def _hoist_dims(launch) -> None:
    for op in _ops_of(launch):
        if op.name != "memref.dim" or _inside(op.operands[0], launch):
            continue
        index = op.operands[1].owner
        with ir.InsertionPoint(launch.operation), op.location:
            if isinstance(index, ir.Block) or index.name != "arith.constant":
                raise ValueError("a kernel reads a dynamic size at an index that is not a constant")
            c = arith.ConstantOp(ir.IndexType.get(), ir.IntegerAttr(index.attributes["value"]).value).result
            outside = memref.DimOp(op.operands[0], c).result
        op.results[0].replace_all_uses_with(outside)
        op.erase()


def static_type(t: ir.MemRefType) -> ir.MemRefType:
    """`t` with its dynamic outermost extent replaced by ROWS_BOUND (any other dynamic dim: an error)."""
    if _DYNAMIC in list(t.shape)[1:]:
        raise ValueError(f"a kernel buffer {t} with a dynamic dim other than the outermost")
    return ir.MemRefType.get([ROWS_BOUND, *list(t.shape)[1:]], t.element_type, memory_space=t.memory_space)


def _cast_buffers(launch) -> None:
    casts = {}
    for op in _ops_of(launch):
        for i, v in enumerate(op.operands):
            if not isinstance(v.type, ir.MemRefType) or ir.MemRefType(v.type).has_static_shape or _inside(v, launch):
                continue
            if v not in casts:
                with ir.InsertionPoint(launch.operation), launch.location:
                    casts[v] = memref.CastOp(static_type(ir.MemRefType(v.type)), v).result
            op.operands[i] = casts[v]


def run(module_op, pass_) -> None:
    for launch in gpu_launches(module_op):
        try:
            _hoist_dims(launch)
            _cast_buffers(launch)
        except ValueError as err:
            launch.location.emit_error(f"{FLAG}: {err}")
            pass_.signal_pass_failure()
            return
