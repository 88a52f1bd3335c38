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


def _constant_pad(pad):
    """(source, low, source shape, the pad's constant value) of a static pad of a constant, else None."""
    if len(pad.operands) != 1:
        return None  # dynamic low or high sizes
    source = pad.operands[0]
    shape = list(ir.RankedTensorType(source.type).shape)
    if any(ir.ShapedType.is_dynamic_size(n) for n in shape):
        return None
    yielded = pad.regions[0].blocks[0].operations[0].operands[0]
    if isinstance(yielded.owner, ir.Block) or yielded.owner.name != "arith.constant":
        return None
    low = list(ir.DenseI64ArrayAttr(pad.attributes["static_low"]))
    high = list(ir.DenseI64ArrayAttr(pad.attributes["static_high"]))
    padded = [bool(lo or hi) for lo, hi in zip(low, high)]
    return source, low, padded, shape, yielded.owner.attributes["value"]


def _rewrite(extract, found) -> None:
    source, low, padded, shape, value = found
    index = ir.IndexType.get()
    with ir.InsertionPoint(extract), extract.location:
        at, inside = [], None
        for d, i in enumerate(list(extract.operands)[1:]):
            if padded[d]:
                if low[d]:
                    i = arith.SubIOp(i, arith.ConstantOp(index, low[d]).result).result
                zero, size = arith.ConstantOp(index, 0).result, arith.ConstantOp(index, shape[d]).result
                ok = arith.AndIOp(arith.CmpIOp(arith.CmpIPredicate.sge, i, zero).result,
                                  arith.CmpIOp(arith.CmpIPredicate.slt, i, size).result).result
                inside = ok if inside is None else arith.AndIOp(inside, ok).result
                last = arith.ConstantOp(index, shape[d] - 1).result
                i = arith.MinSIOp(arith.MaxSIOp(i, zero).result, last).result
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
        found = _constant_pad(pad)
        if found is None:
            continue
        for use in list(pad.results[0].uses):
            user = use.owner
            if user.name == "tensor.extract" and use.operand_number == 0:
                _rewrite(user, found)
        if not list(pad.results[0].uses):
            pad.erase()
