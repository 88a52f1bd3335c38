"""--fusec-inline-broadcast-producers: compute a pointwise op of a reduced value, at a shape between the
reduction's rows and the whole tensor, inside each op that reads it.

GroupNorm's decomposition computes its scale `rstd * weight` and shift `bias - mean * scale` once per
(sample, group, channel): at [N, G, C/G, 1], a shape that is neither the statistics' reduced shape
[N, G, 1, 1] (an epilogue on the reduced value, one per row) nor the normalized tensor's [N, G, C/G,
H*W] (an epilogue over the reduction's rows). The fusion cost model has a place for ops of those two
shapes only: the scale and the shift become a small kernel of their own, between the statistics and
the normalization, and the normalization reads the input again in a third kernel. Computing them
inside the normalization instead (one multiply and add more per element) leaves ops of the two
shapes the cost model fuses: the statistics and the normalization are one kernel.

An op P is inlined when it is an all-parallel linalg.generic with an identity output map, a body of
at most `_BUDGET` ops, no loop indices, an input that is a reduced value (a reduction's result, or a
pointwise op of one at its shape) of a smaller shape than P's, and only all-parallel readers with
more elements than P, which read it at dims and zeros (a broadcast). Each reader gets P's inputs,
read at P's maps composed with its own map of P, and P's body before its own; P is erased. Readers
are visited again, so a chain of such ops (the shift reads the scale) ends in the readers of its last.

Before:
    %s = linalg.generic {indexing_maps = [(d0, d1, d2, d3) -> (d0, d1, 0, 0), (d0, d1, d2, d3) -> (0, d1, d2, 0), id]}
           ins(%rstd, %w : tensor<2x32x1x1xf32>, tensor<1x32x10x1xf32>) outs(...) -> tensor<2x32x10x1xf32> { mulf }
    %y = linalg.generic {indexing_maps = [id, (d0, d1, d2, d3) -> (d0, d1, d2, 0), id]}
           ins(%x, %s : tensor<2x32x10x64xf32>, tensor<2x32x10x1xf32>) ... { mulf %in, %in_1 }
After:
    %y = linalg.generic {indexing_maps = [id, (d0, d1, d2, d3) -> (d0, d1, 0, 0), (d0, d1, d2, d3) -> (0, d1, d2, 0), id]}
           ins(%x, %rstd, %w : ...) ... { %s = mulf %in_1, %in_2; mulf %in, %s }
"""

from __future__ import annotations

import math

from fusec.mlir import ir

from .classify_ops import indexing_maps, iterator_kinds
from .gathers_through_pointwise import clone_mapped
from .reshape_pointwise_loops import elementwise, rows_shape

FLAG = "fusec-inline-broadcast-producers"
SUMMARY = "Compute a pointwise op of a reduced value at a partly broadcast shape inside each of its readers"

_BUDGET = 8  # body ops (the yield included) of an op computed again in each reader


def _size(value):
    """(whether its rows are dynamic, its element count a row or in all): sizes compare only when both
    are static or both read the same dynamic rows (the op's dim 0, which pointwise ops keep); None."""
    shape = rows_shape(value)
    if shape is None:
        return None
    return None in shape, math.prod(n for n in shape if n is not None)


def _smaller(a, b) -> bool:
    return a is not None and b is not None and a[0] == b[0] and a[1] < b[1]


def _reduced_size(value, depth: int = 0):
    """The size (`_size`) of the reduction result `value` is computed from through pointwise ops (the
    smallest, if several), else None."""
    if isinstance(value.owner, ir.Block) or depth > 16 or value.owner.name != "linalg.generic":
        return None
    op = value.owner
    if "reduction" in iterator_kinds(op):
        return _size(value)
    if not elementwise(op):
        return None
    sizes = [n for n in (_reduced_size(v, depth + 1) for v in op.opview.inputs) if n is not None]
    if len({dynamic for dynamic, _ in sizes}) > 1:
        return None
    return min(sizes) if sizes else None


def _broadcast_map(m) -> bool:
    return all(isinstance(e.maybe_downcast(), ir.AffineDimExpr)
               or (isinstance(e.maybe_downcast(), ir.AffineConstantExpr) and e.maybe_downcast().value == 0)
               for e in m.results)


def _feeds_larger(op, depth: int = 0) -> bool:
    """Whether every reader of `op` is an all-parallel op that reads it at a broadcast and has more
    elements than it, or has its shape and feeds such readers the same way (the shift reads the scale)."""
    size = _size(op.results[0])
    uses = list(op.results[0].uses)
    if not uses or depth > 16:
        return False
    for use in uses:
        reader = use.owner
        if not elementwise(reader) or use.operand_number >= len(reader.opview.inputs) \
                or len(list(reader.regions[0].blocks[0].operations)) > 4 * _BUDGET \
                or not _broadcast_map(indexing_maps(reader)[use.operand_number]):
            return False
        reader_size = _size(reader.results[0])
        if reader_size is None or reader_size[0] != size[0] or reader_size[1] < size[1] \
                or (reader_size == size and not _feeds_larger(reader, depth + 1)):
            return False
    return True


def _inlinable(op) -> bool:
    """A small pointwise op of a reduced value, larger than it, whose readers are larger still."""
    if not elementwise(op) or len(list(op.regions[0].blocks[0].operations)) > _BUDGET:
        return False
    return _smaller(_reduced_size(op.results[0]), _size(op.results[0])) and _feeds_larger(op)


def _inline(producer, reader) -> None:
    """Rebuild `reader` with `producer`'s inputs and body in place of its reads of `producer`."""
    view = reader.opview
    old = reader.regions[0].blocks[0]
    n_in = len(view.inputs)
    maps = indexing_maps(reader)
    pmaps = indexing_maps(producer)
    result = producer.results[0]
    reads = [j for j in range(n_in) if view.inputs[j] == result]
    kept = [j for j in range(n_in) if j not in reads]
    p_inputs = list(producer.opview.inputs)
    new_ins = [view.inputs[j] for j in kept]
    new_maps = [maps[j] for j in kept]
    for j in reads:  # the producer's inputs once per read of it (each read may be at another map)
        new_ins += p_inputs
        new_maps += [ir.AffineMap.get(maps[j].n_dims, 0, [e.compose(maps[j]) for e in pm.results])
                     for pm in pmaps[:len(p_inputs)]]
    new_maps += maps[n_in:]
    attributes = {n: reader.attributes[n] for n in (a if isinstance(a, str) else a.name for a in reader.attributes)}
    attributes["indexing_maps"] = ir.ArrayAttr.get([ir.AffineMapAttr.get(m) for m in new_maps])
    attributes["operandSegmentSizes"] = ir.DenseI32ArrayAttr.get([len(new_ins), len(view.outputs)])
    with ir.InsertionPoint(reader), reader.location:
        new = ir.Operation.create("linalg.generic", results=[r.type for r in reader.results],
                                  operands=[*new_ins, *view.outputs], attributes=attributes, regions=1)
    p_block = producer.regions[0].blocks[0]
    p_args = [a.type for a in list(p_block.arguments)[:len(p_inputs)]]
    args = [a.type for a in old.arguments]
    types = [args[j] for j in kept] + p_args * len(reads) + args[n_in:]
    block = new.regions[0].blocks.append(*types, arg_locs=[reader.location] * len(types))
    for pos, j in enumerate(kept):
        old.arguments[j].replace_all_uses_with(block.arguments[pos])
    for k, arg in enumerate(list(old.arguments)[n_in:]):
        arg.replace_all_uses_with(block.arguments[len(kept) + len(p_inputs) * len(reads) + k])
    with ir.InsertionPoint(block):
        for r, j in enumerate(reads):  # the producer's body, once per read
            mapping = {p_block.arguments[i]: block.arguments[len(kept) + r * len(p_inputs) + i]
                       for i in range(len(p_inputs))}
            for inner in p_block.operations:
                if inner.name == "linalg.yield":
                    old.arguments[j].replace_all_uses_with(mapping.get(inner.operands[0], inner.operands[0]))
                    break
                clone_mapped(inner, mapping)
    for inner in list(old.operations):
        inner.detach_from_parent()
        block.append(inner)
    for a, b in zip(reader.results, new.results):
        a.replace_all_uses_with(b)
    reader.erase()


def _next(module_op):
    found = []

    def visit(op):
        if not found and op.name == "linalg.generic" and _inlinable(op):
            found.append(op)
        return ir.WalkResult.ADVANCE
    module_op.walk(visit)
    return found[0] if found else None


def run(module_op, pass_) -> None:
    while (producer := _next(module_op)) is not None:
        readers = []
        for use in producer.results[0].uses:
            if not any(use.owner.operation == r for r in readers):
                readers.append(use.owner.operation)
        for reader in readers:
            _inline(producer, reader)
        producer.erase()
