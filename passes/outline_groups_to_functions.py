"""--fusec-outline-groups-to-functions: make each fused group (on buffers) a function the host calls.

The CPU target's counterpart of `--fusec-lower-groups-to-gpu` + kernel outlining. After
bufferization the ops of a group carry `fusec.group = <id>` (--fusec-dissolve-groups). This pass
moves each run of consecutive ops of one group into a new `func.func @<host>_kernel_<n>` marked
`fusec.kernel`, whose arguments are the buffers the run uses, and leaves a `func.call` in its place.
The host function then holds what the GPU host function holds after outlining (allocations,
constants, buffer views, calls in order, copies, the return), so the launch manifest reads both the
same way and the CPU runtime performs the same steps.

Buffer allocations, constants, views and sizes (`memref.dim`, and index arithmetic on them: a flip
of dynamic rows reads row `rows - 1 - i`) are first hoisted to the top of the host function (they
have no side effects and depend only on each other and the arguments), so that only the group's own
ops are left between its ops. A size a kernel uses is computed again inside it from its buffers.

Kernels take bare pointers, which carry no sizes. A buffer with a dynamic row count (dim 0: a model
compiled with `dynamic_shapes`) is passed cast to a static type (its outermost extent a bound no
address depends on) followed by its row count, and the kernel rebuilds the dynamic buffer from the
two (`memref.reinterpret_cast`, no copy); a scratch buffer of a dynamic size gets its sizes as
arguments too. An op without a group tag becomes a kernel of its own;
`memref.copy` and `memref.dealloc` stay on the host, as the manifest's copy steps.

Before:
    func.func @main(%x: memref<8x4096xf32>) -> memref<8x4096xf32> {
      %acc = memref.alloc() : memref<8x1xf32>
      linalg.fill {fusec.group = 0} ins(%cst) outs(%acc)
      linalg.generic {fusec.group = 0} ins(%x) outs(%acc) ...
      ...
After:
    func.func @main(%x: memref<8x4096xf32>) -> memref<8x4096xf32> {
      %acc = memref.alloc() : memref<8x1xf32>
      call @main_kernel_0(%x, %acc, %out) : (...) -> ()
      ...
    func.func @main_kernel_0(%arg0: memref<8x4096xf32>, %arg1: memref<8x1xf32>, ...) attributes {fusec.kernel} {
      linalg.fill ins(%cst) outs(%arg1)
      ...
"""

from __future__ import annotations

import math

from fusec.diagnostics import aten_name_of_location
from fusec.mlir import ir
from torch_mlir.dialects import arith, func, memref

from .static_kernel_buffers import static_type

FLAG = "fusec-outline-groups-to-functions"
SUMMARY = "Outline each fused group of ops on buffers into a function the host calls (CPU target)"

_HOISTED = ("memref.alloc", "memref.alloca", "arith.constant", "memref.get_global",
            "memref.expand_shape", "memref.collapse_shape", "memref.cast", "memref.dim", "memref.subview")
_DYNAMIC = ir.ShapedType.get_dynamic_size()
_HOST_ONLY = ("memref.copy", "memref.dealloc", "func.return", "func.call")


class _HostValue(Exception):
    """An op of the host function computes a value that a later step reads, and is no kernel: the
    cpu target's host steps are kernel calls and copies (as the cuda target's launch manifest)."""

    def __init__(self, op):
        super().__init__(op.name)
        self.op = op


def _symbol(op) -> str:
    return ir.StringAttr(op.attributes["sym_name"]).value


def _group(op):
    return int(ir.IntegerAttr(op.attributes["fusec.group"]).value) if "fusec.group" in op.attributes else None


def _size_arithmetic(op) -> bool:
    """Index arithmetic of the host function (on sizes), not an op of a group."""
    return op.name.startswith("arith.") and len(op.results) > 0 and "fusec.group" not in op.attributes \
        and all(isinstance(r.type, ir.IndexType) for r in op.results)


def _hoisted(op) -> bool:
    return op.name in _HOISTED or _size_arithmetic(op)


def _runs(block) -> list[list]:
    """Consecutive ops of one group (an untagged op is a run of its own), in order."""
    runs, last = [], None
    for op in block.operations:
        op = op.operation
        if op.name in _HOST_ONLY or _hoisted(op):
            last = None
            continue
        group = _group(op)
        if runs and group is not None and group == last:
            runs[-1].append(op)
        else:
            runs.append([op])
        last = group
    return runs


def _ancestor_in(op, members: set) -> bool:
    """Is `op` (or an op enclosing it) one of `members`?"""
    while op is not None and op.name != "func.func":
        if op in members:
            return True
        op = op.parent.operation if op.parent is not None else None
    return False


def _defined_in(value, members: set) -> bool:
    owner = value.owner
    op = owner.owner.operation if isinstance(owner, ir.Block) else owner.operation
    return _ancestor_in(op, members)


def _is_alloc(value) -> bool:
    return isinstance(value.owner, (ir.Operation, ir.OpView)) and value.owner.operation.name == "memref.alloc"


def _outline(module_body, run: list, name: str) -> None:
    members = set(run)
    outside = []  # values defined outside the run and used in it, in order of first use

    def collect(op):
        for value in op.operands:
            if not _defined_in(value, members) and value not in outside:
                outside.append(value)
        return ir.WalkResult.ADVANCE

    for op in run:
        op.walk(collect)
        for result in op.results:
            if any(not _ancestor_in(use.owner.operation, members) for use in result.uses):
                raise _HostValue(op)
    sized = _size_recipes([v for v in outside if isinstance(v.type, ir.IndexType)], name)
    outside = [v for v in outside if not isinstance(v.type, ir.IndexType)]
    outside += [v for op in sized for v in op.operands
                if not isinstance(v.type, ir.IndexType) and v not in outside]  # the buffers sizes read
    constants = [v for v in outside if isinstance(v.owner, (ir.Operation, ir.OpView))
                 and v.owner.operation.name in ("arith.constant", "memref.get_global")]
    buffers = [v for v in outside if v not in constants]
    for value in buffers:
        if not isinstance(value.type, ir.MemRefType):
            raise ValueError(f"{name} uses a host value of type {value.type} that is neither a buffer nor a constant")

    # A buffer allocated on the host and used only by this run is the group's scratch: it moves
    # into the kernel (as the GPU kernel keeps such values in registers), out of the manifest.
    scratch = [v for v in buffers if _is_alloc(v) and all(_ancestor_in(u.owner.operation, members) for u in v.uses)]
    buffers = [v for v in buffers if v not in scratch]
    sizes = list(dict.fromkeys(v for b in scratch for v in b.owner.operands))  # a dynamic scratch's sizes
    location = run[0].location
    with ir.InsertionPoint(run[0]), location:
        operands = [v for b in buffers for v in _static_view(b)] + sizes
        func.CallOp([], ir.FlatSymbolRefAttr.get(name), operands)
    with ir.InsertionPoint(module_body):
        kernel = func.FuncOp(name, ([v.type for v in operands], []), loc=location)
    kernel.attributes["fusec.kernel"] = ir.UnitAttr.get()
    entry = kernel.add_entry_block([location] * len(operands))
    with ir.InsertionPoint(entry), location:
        replacements = {v: v.owner.clone().result for v in constants}
        args = iter(entry.arguments)
        for v in buffers:
            replacements[v] = _dynamic_view(v.type, next(args), args)
        replacements.update(zip(sizes, args))
        for op in sized:  # the sizes, computed again from the kernel's own buffers
            clone = op.clone()
            for i, operand in enumerate(clone.operands):
                if operand in replacements:
                    clone.operands[i] = replacements[operand]
            replacements.update(zip(op.results, clone.results))
        for v in scratch:
            clone = v.owner.clone()
            for i, size in enumerate(clone.operands):
                clone.operands[i] = replacements[size]
            replacements[v] = clone.result
        ret = func.ReturnOp([])
    for op in run:
        op.move_before(ret)
    with ir.InsertionPoint(ret):
        for value in scratch:
            memref.DeallocOp(replacements[value], loc=location)

    def redirect(op):
        for i, value in enumerate(op.operands):
            if value in replacements:
                op.operands[i] = replacements[value]
        return ir.WalkResult.ADVANCE

    for op in run:
        op.walk(redirect)
    for value in scratch:
        value.owner.operation.erase()


def _size_recipes(values, name: str) -> list:
    """The host ops that compute these index values (constants, `memref.dim`s of buffers, index
    arithmetic), operands first."""
    ops = []

    def visit(value):
        owner = value.owner
        if isinstance(owner, ir.Block) or not (owner.operation.name in ("arith.constant", "memref.dim")
                                                or _size_arithmetic(owner.operation)):
            raise ValueError(f"{name} uses a host index value that is not computed from sizes")
        op = owner.operation
        if op in ops:
            return
        for operand in op.operands:
            if isinstance(operand.type, ir.IndexType):
                visit(operand)
        ops.append(op)

    for value in values:
        visit(value)
    return ops


def _static_view(buffer) -> list:
    """The call's operands for `buffer`: itself, or (a dynamic row count) its static cast and its rows."""
    t = ir.MemRefType(buffer.type)
    if t.has_static_shape:
        return [buffer]
    rows = memref.DimOp(buffer, arith.ConstantOp(ir.IndexType.get(), 0).result).result
    return [memref.CastOp(static_type(t), buffer).result, rows]


def _dynamic_view(dynamic_type, arg, args):
    """In the kernel, the buffer the group's ops use: the argument, or (a dynamic row count) the
    argument viewed with the row count that follows it."""
    t = ir.MemRefType(dynamic_type)
    if t.has_static_shape:
        return arg
    shape = list(t.shape)
    strides = [math.prod(shape[i + 1:]) for i in range(len(shape))]
    return memref.ReinterpretCastOp(t, arg, [], [next(args)], [], static_offsets=[0],
                                    static_sizes=[_DYNAMIC, *shape[1:]], static_strides=strides).result


def run(module_op, pass_) -> None:
    body = module_op.regions[0].blocks[0]
    hosts = [op.operation for op in body.operations if op.operation.name == "func.func"
             and len(op.regions[0].blocks) and "fusec.kernel" not in op.attributes]
    for host in hosts:
        block = host.regions[0].blocks[0]
        ops = [op.operation for op in block.operations]
        anchor = next(op for op in ops if not _hoisted(op))
        for op in ops:
            if _hoisted(op):
                op.move_before(anchor)
        for n, run_ops in enumerate(_runs(block)):
            try:
                _outline(body, run_ops, f"{_symbol(host)}_kernel_{n}")
            except _HostValue as refused:
                named = aten_name_of_location(refused.op.location)
                refused.op.location.emit_error(
                    f"{FLAG}: {f'fusec cannot compile aten.{named}: its ' if named else ''}host op "
                    f"'{refused.op.name}' computes a value that the host's later steps read; the host "
                    "only calls kernels and copies buffers")
                pass_.signal_pass_failure()
                return
