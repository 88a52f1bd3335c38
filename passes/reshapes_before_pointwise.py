"""--fusec-reshapes-before-pointwise: reshape an elementwise op's inputs instead of its result.

A reshape (`tensor.collapse_shape`, `tensor.expand_shape`) of a function's input is free: after
bufferization it is a view of the same buffer, and the op that reads it reads the buffer. A reshape of
a computed value is not: it ends the fusion groups on both sides (fusion rule 7), and the value is
written to memory by one kernel and read by the next. In bf16 models the cast to fp32 comes before
the reshapes: GroupNorm's decomposition casts its [N, C, H, W] input, then views it as [N, G, C/G,
H*W]. In fp32 the same GroupNorm is one reduction kernel that reads the input through the view; in
bf16 it was six kernels and moved four times the bytes (an fp32 copy of the input written and read
again).

An elementwise linalg.generic (every loop parallel, every operand read and written at the loop's own
index, no `linalg.index`) computes the same values on any shape, so a reshape of its result equals
the op applied to the same reshape of each of its inputs. The rewrite moves each such reshape above
the op, so that a chain of reshapes ends at the function's input (a view) and the cast joins its
readers' kernel. An op moves when every use of it is a reshape (nothing is computed twice), or when
it is as cheap as a cast (GroupNorm's normalization reads the cast input at its own shape too: the
cast is then computed in both kernels, each reading the bf16 input); the op of each reshape is a
copy of it on the reshaped shape.

Before:
    %f = linalg.generic {indexing_maps = [id, id], iterator_types = ["parallel" x 4]}
           ins(%x : tensor<2x320x16x16xbf16>) outs(%e : tensor<2x320x16x16xf32>) { extf }
    %c = tensor.collapse_shape %f [[0], [1], [2, 3]] : tensor<2x320x16x16xf32> into tensor<2x320x256xf32>
After:
    %v = tensor.collapse_shape %x [[0], [1], [2, 3]] : tensor<2x320x16x16xbf16> into tensor<2x320x256xbf16>
    %c = linalg.generic {indexing_maps = [id, id], iterator_types = ["parallel" x 3]}
           ins(%v : tensor<2x320x256xbf16>) outs(%e2 : tensor<2x320x256xf32>) { extf }
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import tensor

from .classify_ops import indexing_maps, iterator_kinds

FLAG = "fusec-reshapes-before-pointwise"
SUMMARY = "Move a reshape of an elementwise op's result onto its inputs (a view of a function input is free)"

_RESHAPES = ("tensor.collapse_shape", "tensor.expand_shape")


def _elementwise(op) -> bool:
    """An all-parallel generic of one result whose operands all have its shape, read at identity maps,
    with a body that does not read the loop indices."""
    if op.name != "linalg.generic" or len(op.results) != 1:
        return False
    out = op.results[0].type
    if not (isinstance(out, ir.RankedTensorType) and out.has_static_shape):
        return False
    identity = ir.AffineMap.get_identity(out.rank)
    if any(kind != "parallel" for kind in iterator_kinds(op)) or any(m != identity for m in indexing_maps(op)):
        return False
    if any(not isinstance(v.type, ir.RankedTensorType) or list(v.type.shape) != list(out.shape) for v in op.operands):
        return False
    return not any(inner.name == "linalg.index" for inner in op.regions[0].blocks[0].operations)


# A body of at most this many ops (a cast and its yield) is cheap enough to compute again for a
# reshape while the op stays for its other users.
_CHEAP_BODY = 2


def _may_move(op) -> bool:
    """Whether a reshape of `op`'s result may move onto its inputs: when every use of the result is a
    reshape, or the op is a cast (or as cheap), computed again in its readers' kernels."""
    if all(use.owner.name in _RESHAPES for use in op.results[0].uses):
        return True
    return len(list(op.regions[0].blocks[0].operations)) <= _CHEAP_BODY


def ends_at_input(value, depth: int = 0) -> bool:
    """Whether reshapes moved onto `value` end at a function input: it is one (or a reshape of one),
    or an elementwise op of such values. A reshape left on any other computed value (a reduction, a
    broadcast) is a group boundary there instead of after the op: it stays after the op, which then
    fuses with its producers (fusec-reshape-pointwise-loops runs such ops at their producers' shape)."""
    while not isinstance(value.owner, ir.Block) and value.owner.name in _RESHAPES:
        value = value.owner.operands[0]
    if isinstance(value.owner, ir.Block) or value.owner.name == "arith.constant":
        return True
    owner = value.owner
    return depth < 8 and _elementwise(owner) and all(
        ends_at_input(v, depth + 1) for v in list(owner.operands)[:len(owner.operands) - 1])


def _reshaped(reshape, value):
    """`reshape` (a collapse or expand) applied to `value` instead of its source, at the insertion point."""
    shape = ir.RankedTensorType(reshape.results[0].type).shape
    new = reshape.clone()
    new.operands[0] = value
    new.results[0].set_type(ir.RankedTensorType.get(shape, ir.RankedTensorType(value.type).element_type))
    return new.results[0]


def _move(reshape) -> None:
    """Replace `reshape` of an elementwise generic's result by the generic on the reshaped inputs."""
    generic = reshape.operands[0].owner
    result_type = ir.RankedTensorType(reshape.results[0].type)
    n_inputs = len(generic.operands) - 1
    with ir.InsertionPoint(reshape), reshape.location:
        inputs = [_reshaped(reshape, v) for v in list(generic.operands)[:n_inputs]]
        init = tensor.EmptyOp(result_type.shape, result_type.element_type).result
        new = generic.clone()
        for i, v in enumerate(inputs + [init]):
            new.operands[i] = v
        new.results[0].set_type(result_type)
        identity = ir.AffineMapAttr.get(ir.AffineMap.get_identity(result_type.rank))
        new.attributes["indexing_maps"] = ir.ArrayAttr.get([identity] * (n_inputs + 1))
        parallel = ir.Attribute.parse("#linalg.iterator_type<parallel>")
        new.attributes["iterator_types"] = ir.ArrayAttr.get([parallel] * result_type.rank)
    reshape.results[0].replace_all_uses_with(new.results[0])
    reshape.erase()
    if not list(generic.results[0].uses):
        generic.erase()


def run(module_op, pass_) -> None:
    reshapes = []
    module_op.walk(lambda op: (reshapes.append(op) if op.name in _RESHAPES else None) or ir.WalkResult.ADVANCE)
    for reshape in reshapes:  # in program order: a chain's later reshapes then read the moved op
        source = reshape.operands[0]
        if isinstance(source.owner, ir.Block) or not reshape.results[0].type.has_static_shape:
            continue
        owner = source.owner
        if _elementwise(owner) and _may_move(owner) and ends_at_input(source):
            _move(reshape)
