"""--fusec-extracts-through-pads: read a padded tensor's element from the tensor it pads.

A `tensor.pad` of a constant is a buffer of its own on the GPU, written by the host through a
`memref.subview`, which the launch manifest cannot express. --fusec-pooling-to-generic reads a
pooling's window from the unpadded input, but `max_pool2d(..., return_indices=True)` also computes
the indices, in a second op that gathers from the padded tensor (`tensor.extract %padded[oh * s +
kh, ...]`, to find where the window's max was): the pad stayed, and every max pool with indices
was refused (`host op 'memref.subview'`; 24 OpInfo cases of max_pool1d and max_pool2d).

An element of the padded tensor at index i is the source's element at i - low where that lies in
the source, else the pad's value. So each `tensor.extract` of a static, constant pad becomes a read
of the source at the clamped index, and a select of the pad's value where the index falls outside
along any padded dim. A pad left with no users is erased.

Before:
    %p = tensor.pad %x low[0, 0, 1, 1] high[0, 0, 1, 1] { tensor.yield %ninf }
    %v = tensor.extract %p[%n, %c, %h, %w] : tensor<2x4x11x11xf32>
After:
    %h1 = %h - 1 ; %in = 0 <= %h1 < 9 and 0 <= %w1 < 9 ; clamped into [0, 8]
    %e = tensor.extract %x[%n, %c, %h1c, %w1c] : tensor<2x4x9x9xf32>
    %v = select %in, %e, %ninf
"""

from __future__ import annotations

from fusec.mlir import ir
from torch_mlir.dialects import arith, tensor

FLAG = "fusec-extracts-through-pads"
SUMMARY = "Read the elements of a constant tensor.pad from the tensor it pads (bounds-checked)"


def constant_pad(pad):
    """(source, low, high, the pad's value attribute) of a `tensor.pad` of static sizes whose value is
    a constant, else None."""
    if len(pad.operands) != 1:
        return None  # dynamic low or high sizes
    yielded = pad.regions[0].blocks[0].operations[0].operands[0]
    if isinstance(yielded.owner, ir.Block) or yielded.owner.name != "arith.constant":
        return None
    return (pad.operands[0], list(ir.DenseI64ArrayAttr(pad.attributes["static_low"])),
            list(ir.DenseI64ArrayAttr(pad.attributes["static_high"])), yielded.owner.attributes["value"])


def in_source(i, low: int, size: int, const, inside=None):
    """Index `i` of a padded dim as an index of its source (`size` long, `low` padded before it):
    (i - low clamped into [0, size), whether it lies there and `inside` holds, if given: the flag of
    the other dims). `const(n)` makes an index constant."""
    if low:
        i = arith.SubIOp(i, const(low)).result
    ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, i, const(0)).result,
                      arith.CmpIOp(arith.CmpIPredicate.slt, i, const(size)).result).result
    inside = ok if inside is None else arith.AndIOp(inside, ok).result
    return arith.MinSIOp(arith.MaxSIOp(i, const(0)).result, const(size - 1)).result, inside


def _static_pad(pad):
    """(source, low, which dims are padded, source shape, value) of a constant pad of a static source."""
    found = constant_pad(pad)
    if found is None:
        return None
    source, low, high, value = found
    shape = list(ir.RankedTensorType(source.type).shape)
    if any(ir.ShapedType.is_dynamic_size(n) for n in shape):
        return None
    return source, low, [bool(lo or hi) for lo, hi in zip(low, high)], shape, value


def _rewrite(extract, found) -> None:
    source, low, padded, shape, value = found
    index = ir.IndexType.get()
    with ir.InsertionPoint(extract), extract.location:
        at, inside = [], None
        for d, i in enumerate(list(extract.operands)[1:]):
            if padded[d]:
                i, inside = in_source(i, low[d], shape[d], lambda n: arith.ConstantOp(index, n).result, inside)
            at.append(i)
        read = tensor.ExtractOp(source, at).result
        if inside is not None:
            read = arith.SelectOp(inside, read, arith.ConstantOp(read.type, value).result).result
    extract.results[0].replace_all_uses_with(read)
    extract.erase()


def run(module_op, pass_) -> None:
    pads = []
    module_op.walk(lambda op: (pads.append(op) if op.name == "tensor.pad" else None) or ir.WalkResult.ADVANCE)
    for pad in pads:
        found = _static_pad(pad)
        if found is None:
            continue
        for use in list(pad.results[0].uses):
            user = use.owner
            if user.name == "tensor.extract" and use.operand_number == 0:
                _rewrite(user, found)
        if not list(pad.results[0].uses):
            pad.erase()
