"""--fusec-fold-empty-tensors: compute nothing for tensors with no elements.

A tensor with a zero-size dim (`tensor<3x0x4xf32>`) holds no value, and an op over an empty loop
runs no iteration: its results are its inits. Left in the IR, such ops became kernels over buffers
that MLIR's bare-pointer calling convention cannot type (a zero-size dim past the first makes the
outer strides dynamic), so the kernel function stayed in the func dialect and the cpu target's module
failed to load ("missing LLVMTranslationDialectInterface registration ... func.func"); on the GPU it
would be a kernel launched over no threads. The zero-element values are taken out before fusion:

1. Every use of a statically shaped zero-element tensor (an op result or a function argument) reads
   a `tensor.empty` of that type instead: the ops that made it are then dead (canonicalize erases
   them), and no kernel reads or writes it.
2. A linalg.generic with an input of a zero-size dim that indexes a loop (a reduction over an empty
   dim: `x.sum(1)` of a 3x0x4 tensor) runs no iteration: its results are its `outs` (the reduction's
   initial values: 0 for a sum, -inf for a max, as eager's empty reductions give).

A tensor with a dynamic row count and a static zero-size dim (`tensor<?x0x4xf32>`) has no elements
either: its `tensor.empty` takes the row count from the value itself (`tensor.dim`, which
canonicalization reads through to the function's argument). A row count of 0 alone is handled at
launch (the runtime returns empty outputs).

Before:
    %0 = linalg.generic {indexing_maps = [(d0, d1, d2) -> (d0, d1, d2), (d0, d1, d2) -> (d0, d2)],
           iterator_types = ["parallel", "reduction", "parallel"]}
           ins(%x : tensor<3x0x4xf32>) outs(%zeros : tensor<3x4xf32>) {...}
After:
    (the uses of %0 read %zeros)
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, tensor

from .classify_ops import indexing_maps

FLAG = "fusec-fold-empty-tensors"
SUMMARY = "Replace zero-element tensors by tensor.empty and ops over empty loops by their inits"


def empty_like(value, element_type, dims=None):
    """A tensor.empty of `element_type` shaped as `value` (or as its dims `dims`, in that order: a
    transpose's permutation), at the insertion point; a dynamic dim sized by a tensor.dim of `value`."""
    type_ = ir.RankedTensorType(value.type)
    dims = list(range(type_.rank)) if dims is None else dims
    sizes = [tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), i).result).result
             if type_.shape[i] == ir.ShapedType.get_dynamic_size() else type_.shape[i] for i in dims]
    return tensor.EmptyOp(sizes, element_type).result


def _is_empty(value) -> bool:
    if not isinstance(value.type, ir.RankedTensorType):
        return False
    return 0 in ir.RankedTensorType(value.type).shape


def _runs_no_iteration(op) -> bool:
    """A linalg.generic one of whose loops is indexed by a zero-size dim of an input."""
    if op.name != "linalg.generic":
        return False
    inputs = list(op.opview.inputs)
    for value, m in zip(inputs, indexing_maps(op)):
        if not isinstance(value.type, ir.RankedTensorType):
            continue
        shape = ir.RankedTensorType(value.type).shape
        for size, expr in zip(shape, m.results):
            if size == 0 and isinstance(expr.maybe_downcast(), ir.AffineDimExpr):
                return True
    return False


def _run_on_function(func) -> None:
    entry = func.regions[0].blocks[0]
    empties = {}

    def empty_of(value, after=None):
        """A tensor.empty of value's type: one per static type; a dynamic one sized from `value`."""
        type_ = ir.RankedTensorType(value.type)
        dynamic = [i for i, d in enumerate(type_.shape) if d == ir.ShapedType.get_dynamic_size()]
        key = str(type_)
        if dynamic or key not in empties:
            where = ir.InsertionPoint(after) if after is not None else ir.InsertionPoint.at_block_begin(entry)
            with where, func.location:
                sizes = [tensor.DimOp(value, arith.ConstantOp(ir.IndexType.get(), i).result).result
                         if i in dynamic else d for i, d in enumerate(type_.shape)]
                empty = tensor.EmptyOp(sizes, type_.element_type).result
            if dynamic:
                return empty
            empties[key] = empty
        return empties[key]

    def replace(value, new) -> None:
        for use in list(value.uses):
            use.owner.operands[use.operand_number] = new

    for arg in entry.arguments:
        if _is_empty(arg):
            new = empty_of(arg)
            replace(arg, new)
            _restore_dims(new, arg)
    ops = list(entry.operations)
    for i, op in enumerate(ops):
        if op.name in ("tensor.empty", "tensor.dim", "arith.constant") or not op.results:
            continue
        following = ops[i + 1]  # the new empty goes right after `op` (a terminator ends the block)
        for result in op.results:
            if _is_empty(result) and list(result.uses):
                new = empty_of(result, after=following)
                replace(result, new)
                _restore_dims(new, result)
        if _runs_no_iteration(op):
            for result, init in zip(op.results, op.opview.outputs):
                replace(result, init)


def _restore_dims(empty, value) -> None:
    """The tensor.dim ops that size `empty` read `value` again (the replacement redirected them too)."""
    owner = empty.owner
    for size in list(owner.operands):
        dim = size.owner
        if getattr(dim, "name", "") == "tensor.dim":
            dim.operands[0] = value


def run(module_op, pass_) -> None:
    funcs = []
    module_op.walk(lambda op: (funcs.append(op) if op.name == "func.func" else None) or ir.WalkResult.ADVANCE)
    for func in funcs:
        if func.regions[0].blocks:
            _run_on_function(func)
